import { CharterError } from "../foundation/charter-error.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodeForResult } from "./exit-code.js";
import { runObserverFlags, runObservers } from "./run-observers.js";
import { runStopText } from "./run-stop-text.js";
import { sharedFlags } from "./shared-flags.js";

const flags = {
  approve: {
    type: "string",
    multiple: true,
    valueName: "CALL-ID",
    defaultText: "none",
    description: "Approve this pending tool call (its id from the stop message or runs show).",
  },
  deny: {
    type: "string",
    multiple: true,
    valueName: "CALL-ID",
    defaultText: "none",
    description: "Deny this pending tool call: the model is told it was denied.",
  },
  answer: {
    type: "string",
    multiple: true,
    valueName: "CALL-ID=JSON",
    defaultText: "none",
    description:
      "Answer the question a tool's server asked in this pending call: a JSON object with the fields it asked for, or decline or cancel. CALL-ID= may be left out when the run waits on one question.",
  },
  json: { ...sharedFlags.json, description: "Print the whole result as JSON." },
  store: sharedFlags.store,
  config: sharedFlags.config,
  tenant: {
    ...sharedFlags.tenant,
    description: "The tenant whose run to continue: another tenant's runs are not found.",
  },
  "runs-dir": sharedFlags["runs-dir"],
  ...runObserverFlags,
} as const;

/** `charter resume <run-id> [--approve <call-id>]... [--deny <call-id>]...`. */
export const resumeCommand = defineCommand({
  name: "resume",
  summary:
    "Continue a stopped run, approving or denying its pending tool calls, or answering their questions",
  description:
    "Continues a run from the run store where it stopped (awaiting approval, interrupted, or a process that died), with the same contract, and prints its report as charter run does.",
  positionals: [{ name: "run-id", description: "The run to continue." }],
  flags,
  examples: [
    "charter resume 01JD8X3K2M --approve call_1",
    "charter resume 01JD8X3K2M --deny call_2 --json",
    `charter resume 01JD8X3K2M --answer 'call_3={"environment":"staging"}'`,
  ],
  run: resumeRun,
});

async function resumeRun(
  positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const { resumeStoredRun } = await import("../runner/resume-stored-run.js");
  const { finalReportText } = await import("../session/final-report.js");
  const [runId] = positionals;
  if (runId === undefined) {
    throw new CharterError("ARGUMENT_INVALID", "charter resume needs a run id", {
      details: { argument: "run" },
    });
  }
  const { createAgentCatalog } = await import("../agents/create-agent-catalog.js");
  const result = await resumeStoredRun({
    runId,
    // A run of a built-in agent records its id, which the registry resolves again; sub-agents named by id too.
    agentCatalog: createAgentCatalog(),
    approve: values.approve ?? [],
    deny: values.deny ?? [],
    answer: values.answer ?? [],
    signal: streams.signal,
    ...runObservers(values, streams),
    ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
    ...(values.store !== undefined ? { store: values.store } : {}),
    ...(values.config !== undefined ? { configPath: values.config } : {}),
    ...(values.tenant !== undefined ? { tenantId: values.tenant } : {}),
    ...(values["runs-dir"] !== undefined ? { runsDirectory: values["runs-dir"] } : {}),
  });
  if (values.json) streams.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    if (result.finalReport !== null) streams.stdout.write(`${finalReportText(result.finalReport)}\n`);
    streams.stderr.write(runStopText(result, values.tenant !== undefined ? { tenantId: values.tenant } : {}));
  }
  return exitCodeForResult(result);
}
