import { CharterError } from "../foundation/charter-error.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodeForError, exitCodes } from "./exit-code.js";
import { sharedFlags } from "./shared-flags.js";

const flags = {
  json: {
    ...sharedFlags.json,
    description: "Print one JSON document on stdout (the result, the workflow run, the check).",
  },
} as const;

const usage = "usage: charter workflow validate <file>";

/** `charter workflow validate <file>`. */
export const workflowCommand = defineCommand({
  name: "workflow",
  summary: "Check a workflow file",
  description:
    "workflow validate checks a workflow file without running anything: its keys, each step's agent or tool, dependencies (no unknown step, no cycle), and every template; it lists every problem with its key, line and step (exit 4 when there is one).",
  positionals: [
    { name: "validate", description: "validate: check a workflow file." },
    { name: "file", optional: true, description: "The workflow file." },
  ],
  flags,
  examples: ["charter workflow validate release-notes.workflow.yaml"],
  run: runWorkflowCommand,
});

async function runWorkflowCommand(
  positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const [subcommand, target] = positionals;
  if (subcommand === "validate" && target !== undefined) return validateWorkflow(target, values, streams);
  throw new CharterError("ARGUMENT_INVALID", usage, { details: { argument: "subcommand" } });
}

async function validateWorkflow(
  file: string,
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const { loadWorkflowFile } = await import("../workflow/load-workflow-file.js");
  try {
    const { definition, path } = await loadWorkflowFile(file);
    if (values.json) {
      streams.stdout.write(
        `${JSON.stringify({ ok: true, file: path, workflowId: definition.id, steps: definition.steps.map((step) => step.id), issues: [] })}\n`,
      );
    } else {
      streams.stdout.write(
        `valid: workflow ${definition.id}, ${definition.steps.length} step${definition.steps.length === 1 ? "" : "s"} (maxConcurrency ${definition.maxConcurrency}, failureStrategy ${definition.failureStrategy})\n`,
      );
    }
    return exitCodes.success;
  } catch (error) {
    if (!CharterError.isInstance(error) || error.code !== "WORKFLOW_FILE_INVALID") throw error;
    const issues = (error.details.issues as
      | { key: string; step: string | null; message: string; line?: number }[]
      | undefined) ?? [{ key: String(error.details.key ?? ""), step: null, message: error.message }];
    const fileName = String(error.details.file ?? file);
    if (values.json) {
      streams.stdout.write(`${JSON.stringify({ ok: false, file: fileName, issues })}\n`);
    } else {
      for (const found of issues) {
        const where = [
          found.line === undefined ? fileName : `${fileName}:${found.line}`,
          found.key === "" ? null : found.key,
          found.step === null ? null : `step "${found.step}"`,
        ].filter((part) => part !== null);
        streams.stdout.write(`${where.join(": ")}: ${found.message}\n`);
      }
      streams.stderr.write(
        `charter: ${error.code}: ${issues.length} problem${issues.length === 1 ? "" : "s"} in ${fileName}\n`,
      );
    }
    return exitCodeForError(error.code);
  }
}
