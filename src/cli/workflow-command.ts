import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { CharterError } from "../foundation/charter-error.js";
import type { WorkflowProgressEvent } from "../workflow/workflow-progress-event.js";
import type { WorkflowResult } from "../workflow/workflow-result.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodeForError, exitCodes } from "./exit-code.js";
import { openCliStore } from "./open-cli-store.js";
import { sharedFlags } from "./shared-flags.js";

const flags = {
  input: {
    type: "string",
    valueName: "JSON|@FILE",
    defaultText: "{}",
    description:
      "workflow run: the workflow's input, as JSON or @file.json; checked against its input schema first.",
  },
  json: {
    ...sharedFlags.json,
    description:
      "Print one JSON document on stdout (the result, the stored workflow run, or the file's check).",
  },
  store: sharedFlags.store,
  config: sharedFlags.config,
  "runs-dir": sharedFlags["runs-dir"],
  tenant: {
    ...sharedFlags.tenant,
    description:
      "workflow run: who the workflow is for (recorded on its run and every step's run); resume and show: the tenant whose workflow run it is.",
  },
  "correlation-id": {
    type: "string",
    valueName: "ID",
    description:
      "workflow run: your id for what the workflow serves, recorded on its run and every step's run.",
  },
  progress: {
    type: "boolean",
    default: false,
    description: "Print each step's start and end on stderr even when it is not a terminal.",
  },
} as const;

const usage =
  "usage: charter workflow run <file> [--input JSON|@file.json] | resume <workflow-run-id> | show <workflow-run-id> | validate <file>";

/** `charter workflow run|resume|show|validate`. */
export const workflowCommand = defineCommand({
  name: "workflow",
  summary: "Run, resume, show or check a workflow of agent and tool steps",
  description:
    "workflow run runs a workflow file: its steps (each an agent run or a tool call) in array order, or as their dependencies allow up to maxConcurrency at once, with a checkpoint after each step; it prints the workflow's output on stdout and each step's status on stderr, exit 0 only when every step completed. workflow resume continues an interrupted workflow run (or one whose process died) after its last checkpoint: completed steps are not run again. workflow show prints a stored workflow run. workflow validate checks a file without running anything (its keys, steps, dependencies, templates, and that each step's agent resolves), listing every problem with its key, line and step (exit 4 when there is one).",
  positionals: [
    { name: "run|resume|show|validate", description: "What to do." },
    {
      name: "file|workflow-run-id",
      optional: true,
      description: "The workflow file (run, validate) or run id.",
    },
  ],
  flags,
  examples: [
    'charter workflow run release-notes.workflow.yaml --input \'{"range":"v1.2..v1.3"}\'',
    "charter workflow run release-notes.workflow.yaml --input @input.json --json",
    "charter workflow resume 01JD8X3K2M",
    "charter workflow show 01JD8X3K2M --json",
    "charter workflow validate release-notes.workflow.yaml",
  ],
  run: runWorkflowCommand,
});

async function runWorkflowCommand(
  positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const [subcommand, target] = positionals;
  if (target !== undefined) {
    if (subcommand === "validate") return validateWorkflow(target, values, streams);
    if (subcommand === "run") return runWorkflowFile(target, values, streams);
    if (subcommand === "resume") return resumeWorkflowRun(target, values, streams);
    if (subcommand === "show") return showWorkflowRun(target, values, streams);
  }
  throw new CharterError("ARGUMENT_INVALID", usage, { details: { argument: "subcommand" } });
}

/** `--input`: JSON, or `@file.json`. */
async function readInput(value: string | undefined): Promise<unknown> {
  if (value === undefined) return {};
  const fromFile = value.startsWith("@");
  let text = value;
  if (fromFile) {
    const path = resolve(value.slice(1));
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      throw new CharterError("ARGUMENT_INVALID", `--input ${value}: cannot read ${path}`, {
        details: {
          argument: "input",
          file: path,
          reason: (error as NodeJS.ErrnoException).code ?? "unreadable",
        },
      });
    }
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `--input ${fromFile ? value : "value"} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      { details: { argument: "input" } },
    );
  }
}

/** Progress on stderr: when it is a terminal, or with --progress (never mixed into --json's stdout). */
function progressPrinter(values: FlagValues<typeof flags>, streams: CliStreams) {
  if (values.progress !== true && streams.stderr.isTTY !== true) return undefined;
  return (event: WorkflowProgressEvent) => streams.stderr.write(`[workflow] ${progressLine(event)}\n`);
}

function progressLine(event: WorkflowProgressEvent): string {
  switch (event.type) {
    case "step_started":
    case "compensation_started": {
      const what = event.type === "step_started" ? "step" : "compensating";
      const how = event.continued === true ? "continues" : "started";
      return `${what} ${event.stepId} ${how}${event.runId === null ? "" : ` (run ${event.runId})`}`;
    }
    case "step_ended":
      return `step ${event.stepId} ${event.status} in ${event.durationMs} ms`;
    case "step_skipped":
      return `step ${event.stepId} skipped: ${event.reason}`;
    case "compensation_ended":
      return `compensation of ${event.stepId}: ${event.status}`;
    case "workflow_ended":
      return `workflow ${event.status}`;
  }
}

/** The exit code of a workflow: 0 only when it completed; otherwise the code of its first error, as for run. */
function exitCodeForWorkflow(result: {
  readonly status: string;
  readonly errors: WorkflowResult["errors"];
}): number {
  if (result.status === "completed") return exitCodes.success;
  const first = result.errors[0];
  return first === undefined ? exitCodes.sessionFailure : exitCodeForError(first.code as never);
}

/** The result as text: the output on stdout, each step and the summary on stderr. */
function printResult(
  result: Omit<WorkflowResult, "status"> & {
    readonly status: string;
    readonly resumeCommand?: string | null;
  },
  streams: CliStreams,
  outputOnStdout: boolean,
): void {
  if (outputOnStdout && result.output !== null) {
    streams.stdout.write(
      `${typeof result.output === "string" ? result.output : JSON.stringify(result.output)}\n`,
    );
  }
  const out = outputOnStdout ? streams.stderr : streams.stdout;
  for (const step of result.steps) {
    out.write(
      `  ${[step.id, step.status, step.runId ?? "-", step.outcome ?? "-", step.durationMs === null ? "-" : `${step.durationMs}ms`].join("  ")}\n`,
    );
  }
  for (const error of result.errors) {
    out.write(
      `  error: ${error.stepId === null ? error.phase : `step ${error.stepId} (${error.phase})`}: ${error.code}: ${error.message}\n`,
    );
  }
  out.write(
    `workflow ${result.workflowId} ${result.status}: run ${result.workflowRunId}, tokens ${result.accounting.tokens.input}/${result.accounting.tokens.output}, cost $${result.accounting.costUsd}, head ${result.headHash}\n`,
  );
  const resumeCommand =
    result.resumeCommand ??
    (result.status === "interrupted" ? `charter workflow resume ${result.workflowRunId}` : null);
  if (resumeCommand !== null && resumeCommand !== undefined) out.write(`continue with: ${resumeCommand}\n`);
}

async function runWorkflowFile(
  file: string,
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const { runWorkflow } = await import("../workflow/run-workflow.js");
  const input = await readInput(values.input);
  const result = await runWorkflow({
    workflowPath: file,
    input,
    ...(values["correlation-id"] !== undefined ? { correlationId: values["correlation-id"] } : {}),
    ...workflowRunOptions(values, streams),
  });
  return reportWorkflowResult(result, values, streams);
}

/** What `workflow run` and `workflow resume` pass alike: the signal, the shared flags and the progress printer. */
function workflowRunOptions(values: FlagValues<typeof flags>, streams: CliStreams) {
  const onProgress = progressPrinter(values, streams);
  return {
    signal: streams.signal,
    ...(values.config !== undefined ? { configPath: values.config } : {}),
    ...(values.store !== undefined ? { store: values.store } : {}),
    ...(values["runs-dir"] !== undefined ? { runsDirectory: values["runs-dir"] } : {}),
    ...(values.tenant !== undefined ? { tenantId: values.tenant } : {}),
    ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
    ...(onProgress !== undefined ? { onProgress } : {}),
  };
}

/** Prints a run's or resume's result (the document with --json) and answers its exit code. */
function reportWorkflowResult(
  result: WorkflowResult,
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): number {
  if (values.json) streams.stdout.write(`${JSON.stringify(result)}\n`);
  else
    printResult(
      values.tenant === undefined
        ? result
        : { ...result, resumeCommand: resumeCommandOf(result, values.tenant) },
      streams,
      true,
    );
  return exitCodeForWorkflow(result);
}

function resumeCommandOf(result: WorkflowResult, tenant: string): string | null {
  return result.status === "interrupted"
    ? `charter workflow resume ${result.workflowRunId} --tenant ${tenant}`
    : null;
}

async function resumeWorkflowRun(
  runId: string,
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const { resumeWorkflow } = await import("../workflow/resume-workflow.js");
  const result = await resumeWorkflow({
    workflowRunId: runId,
    ...workflowRunOptions(values, streams),
  });
  return reportWorkflowResult(result, values, streams);
}

async function showWorkflowRun(
  runId: string,
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const { readStoredWorkflow } = await import("../workflow/read-stored-workflow.js");
  const store = await openCliStore(values, streams);
  try {
    const shown = await readStoredWorkflow(store, runId);
    if (values.json) streams.stdout.write(`${JSON.stringify(shown)}\n`);
    else {
      if (shown.output !== null) {
        streams.stdout.write(
          `output: ${typeof shown.output === "string" ? shown.output : JSON.stringify(shown.output)}\n`,
        );
      }
      printResult(shown, streams, false);
    }
    return exitCodes.success;
  } finally {
    await store.close();
  }
}

async function validateWorkflow(
  file: string,
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const { loadWorkflowFile, workflowFileInvalid } = await import("../workflow/load-workflow-file.js");
  try {
    const loaded = await loadWorkflowFile(file);
    const { definition, path } = loaded;
    // Each step's agent, resolved as its run will resolve it (the registry of the configuration found from here).
    const { loadConfiguration } = await import("../config/load-configuration.js");
    const { createAgentCatalog } = await import("../agents/create-agent-catalog.js");
    const { checkWorkflowAgents } = await import("../workflow/check-workflow-agents.js");
    const cwd = process.cwd();
    const { configuration } = await loadConfiguration({
      cwd,
      promptDirectory: loaded.directory,
      ...(values.config !== undefined ? { configPath: resolve(values.config) } : {}),
      ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
    });
    const agentProblems = await checkWorkflowAgents(loaded, { configuration, cwd }, createAgentCatalog());
    if (agentProblems.length > 0) throw workflowFileInvalid(path, agentProblems);
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
