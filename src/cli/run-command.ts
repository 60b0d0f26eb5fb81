import type { AgentSelectionRecord } from "../contract/agent-selection-record.js";
import { CharterError } from "../foundation/charter-error.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
import type { CharterEvent } from "../session/charter-event.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodeForResult } from "./exit-code.js";
import { runObserverFlags, runObservers } from "./run-observers.js";
import { runStopText } from "./run-stop-text.js";
import { sharedFlags } from "./shared-flags.js";

const flags = {
  config: sharedFlags.config,
  set: {
    type: "string",
    multiple: true,
    valueName: "key=value",
    defaultText: "none",
    description:
      "Override one configuration or frontmatter setting for this run (maxTurns=3, models=local/m).",
  },
  stream: {
    type: "boolean",
    default: false,
    description: "Print the answer on stdout as it arrives, and reasoning and tool calls on stderr.",
  },
  json: { ...sharedFlags.json, description: "Print the whole result (outcome, report, accounting) as JSON." },
  "runs-dir": sharedFlags["runs-dir"],
  store: sharedFlags.store,
  tenant: {
    type: "string",
    valueName: "ID",
    description:
      "Who the run is for: recorded on the run and every accounting entry; its read-only tool cache is this tenant's alone.",
  },
  "correlation-id": {
    type: "string",
    valueName: "ID",
    description:
      "Your id for what the run serves (a request id): recorded on the run and every accounting entry, and sent to its tools (x-correlation-id, MCP _meta).",
  },
  ...runObserverFlags,
  "dry-run": {
    type: "boolean",
    default: false,
    description:
      "Run nothing: check the configuration, the agent, its model targets, tool servers and endpoints as charter doctor does (no prompt needed).",
  },
} as const;

/** `charter run <agent-id|agent.md|auto> [prompt|-]`: the report on stdout (or the whole result with --json). */
export const runCommand = defineCommand({
  name: "run",
  summary: "Run an agent on a prompt and print its report",
  description:
    "Runs the agent on the prompt under its contract, records the run in the run store and its transcript in the runs directory, and prints the final report on stdout (progress on stderr). The agent is a file path, the id of an agent in the registry (agentsDir, else ./agents; standard is built in), or auto: the agent selection ranks first for the prompt (named on stderr, and recorded in the contract's decisions). The exit code says how it ended.",
  positionals: [
    {
      name: "agent-id|agent.md|auto",
      description:
        "A registry agent id (lowercase letters, digits, hyphens: reviewer, standard), an agent file (Markdown with a YAML frontmatter), or auto to have the agent selected for the prompt.",
    },
    {
      name: "prompt|-",
      optional: true,
      description: "The task; '-' or nothing reads it from stdin (quote it when it has spaces).",
    },
  ],
  flags,
  examples: [
    'charter run agent.md "Summarise the open issues"',
    'charter run reviewer "Review the last commit"',
    'charter run auto "Find recent papers on retrieval-augmented generation"',
    "echo 'List the files' | charter run agent.md - --json",
    "charter run agent.md 'Plan the release' --set maxTurns=5 --stream",
  ],
  run: runAgentCommand,
});

async function runAgentCommand(
  positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const { runAgent } = await import("../runner/run-agent.js");
  const { createAgentCatalog } = await import("../agents/create-agent-catalog.js");
  const agentCatalog = createAgentCatalog();
  const { finalReportText } = await import("../session/final-report.js");
  // More than two arguments never reach here: the parser rejects them (quote the prompt).
  const [agentPath, promptArgument] = positionals;
  if (values["dry-run"] === true && agentPath !== undefined) {
    if (agentPath === "auto") {
      throw new CharterError(
        "ARGUMENT_INVALID",
        '--dry-run checks one agent, and auto chooses it from the prompt: run charter agents select "<task>" to see which agent auto would choose, then charter run <agent-id> --dry-run',
        { details: { argument: "dry-run", reason: "auto" } },
      );
    }
    const { runDoctor } = await import("./doctor-command.js");
    return runDoctor(agentPath, { config: values.config, json: values.json }, streams, agentCatalog);
  }
  if (agentPath === undefined) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      "charter run needs an agent: charter run <agent-id|agent.md|auto> [prompt|-]",
      {
        details: { argument: "agent" },
      },
    );
  }
  const prompt =
    promptArgument === undefined || promptArgument === "-" ? await readAll(streams.stdin) : promptArgument;
  if (prompt.trim() === "") {
    throw new CharterError(
      "ARGUMENT_INVALID",
      "the prompt is empty: pass it as an argument or on stdin with '-'",
      {
        details: { argument: "prompt" },
      },
    );
  }
  // Tool arguments printed with --stream pass the run's secret redactor, which the runner hands over at start.
  let redactor: SecretRedactor | null = null;
  const redact = (text: string) => (redactor === null ? text : redactor.redactString(text));
  // --stream: text deltas go to stdout as they arrive; reasoning and tool calls to stderr.
  let streamedText = false;
  const onEvent =
    values.stream && !values.json
      ? (event: CharterEvent) => {
          if (event.type === "text_delta") {
            streams.stdout.write(event.text);
            streamedText = true;
          } else if (event.type === "reasoning_delta") streams.stderr.write(event.text);
          else if (event.type === "tool_call_started")
            streams.stderr.write(redact(`\n[tool] ${event.name} ${JSON.stringify(event.arguments)}\n`));
          else if (event.type === "model_attempt_ended" && streamedText) streams.stdout.write("\n");
        }
      : undefined;
  const set = [...(values.set ?? []), ...(values.stream ? ["stream=true"] : [])];
  const result = await runAgent({
    agentPath,
    agentCatalog,
    // Which agent `auto` chose and why, on stderr (the report alone, or the one JSON document, on stdout).
    onAgentSelection: (selection) => streams.stderr.write(selectionText(selection)),
    prompt,
    ...(values.config !== undefined ? { configPath: values.config } : {}),
    ...(set.length > 0 ? { set } : {}),
    ...(onEvent !== undefined ? { onEvent } : {}),
    ...(values["runs-dir"] !== undefined ? { runsDirectory: values["runs-dir"] } : {}),
    ...(values.store !== undefined ? { store: values.store } : {}),
    ...(values.tenant !== undefined ? { tenantId: values.tenant } : {}),
    ...(values["correlation-id"] !== undefined ? { correlationId: values["correlation-id"] } : {}),
    signal: streams.signal,
    ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
    ...runObservers(values, streams, process.env, (runRedactor) => {
      redactor = runRedactor;
    }),
  });
  if (values.json) {
    streams.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    // A text answer that was streamed is already on stdout; a report from final_report is printed whole.
    const alreadyShown = streamedText && result.finalReport?.source === "text_fallback";
    if (result.finalReport !== null && !alreadyShown)
      streams.stdout.write(`${finalReportText(result.finalReport)}\n`);
    streams.stderr.write(runStopText(result, values.tenant !== undefined ? { tenantId: values.tenant } : {}));
  }
  return exitCodeForResult(result);
}

function selectionText(selection: AgentSelectionRecord): string {
  const chosen = selection.candidates.find((candidate) => candidate.agentId === selection.selected);
  const why = chosen === undefined ? "" : `: ${chosen.reasons.join("; ")}`;
  return `charter: auto selected ${selection.selected} (confidence ${chosen?.confidence ?? "?"})${why}\n`;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}
