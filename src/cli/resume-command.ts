import { CharterError } from "../foundation/charter-error.js";
import { resumeStoredRun } from "../runner/resume-stored-run.js";
import { finalReportText } from "../session/final-report.js";
import type { CliStreams } from "./cli-streams.js";
import { exitCodeForResult } from "./exit-code.js";
import { runStopText } from "./run-stop-text.js";

/** `charter resume <run-id> [--approve <call-id>]... [--deny <call-id>]...`. */
export async function resumeCommand(
  positionals: readonly string[],
  values: {
    json?: boolean;
    store?: string;
    config?: string;
    approve?: string[];
    deny?: string[];
    "runs-dir"?: string;
  },
  streams: CliStreams,
): Promise<number> {
  const [runId] = positionals;
  if (runId === undefined) {
    throw new CharterError("ARGUMENT_INVALID", "charter resume needs a run id", {
      details: { argument: "run" },
    });
  }
  const result = await resumeStoredRun({
    runId,
    approve: values.approve ?? [],
    deny: values.deny ?? [],
    signal: streams.signal,
    ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
    ...(values.store !== undefined ? { store: values.store } : {}),
    ...(values.config !== undefined ? { configPath: values.config } : {}),
    ...(values["runs-dir"] !== undefined ? { runsDirectory: values["runs-dir"] } : {}),
  });
  if (values.json) streams.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    if (result.finalReport !== null) streams.stdout.write(`${finalReportText(result.finalReport)}\n`);
    streams.stderr.write(runStopText(result));
  }
  return exitCodeForResult(result);
}
