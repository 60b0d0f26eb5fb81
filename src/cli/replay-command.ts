import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { CharterError } from "../foundation/charter-error.js";
import { replayRunDirectory } from "../runner/replay-run-directory.js";
import { replayStoredRun } from "../runner/replay-stored-run.js";
import type { CliStreams } from "./cli-streams.js";
import { exitCodes } from "./exit-code.js";
import { openCliStore } from "./open-cli-store.js";

/** A run id: the run store first, then the runs directory. */
async function replayById(
  runId: string,
  values: { "runs-dir"?: string; store?: string; config?: string; "live-tools"?: boolean },
) {
  const store = await openCliStore(values);
  try {
    if ((await store.getRun(runId)) !== null)
      return await replayStoredRun(store, runId, { liveTools: values["live-tools"] === true });
  } finally {
    await store.close();
  }
  return replayRunDirectory(join(values["runs-dir"] ?? join(homedir(), ".charter", "runs"), runId));
}

/** `charter replay <run-id|run-dir>`: re-runs a recorded run with no network and compares every entry. */
export async function replayCommand(
  positionals: readonly string[],
  values: { json?: boolean; "runs-dir"?: string; store?: string; config?: string; "live-tools"?: boolean },
  streams: CliStreams,
): Promise<number> {
  const [target] = positionals;
  if (target === undefined) {
    throw new CharterError("ARGUMENT_INVALID", "charter replay needs a run directory or run id", {
      details: { argument: "run" },
    });
  }
  const report = existsSync(target)
    ? await replayRunDirectory(resolve(target))
    : await replayById(target, values);
  if (values.json) streams.stdout.write(`${JSON.stringify(report)}\n`);
  else if (report.ok) {
    streams.stdout.write(
      `replayed: ${report.entries} entries, outcome ${report.outcome}, head ${report.headHash} (matches the record)\n`,
    );
  } else {
    const divergence = report.divergence;
    streams.stdout.write(
      `DIVERGED at entry ${divergence?.seq} (${divergence?.step_id}): ${divergence?.reason}: ${divergence?.detail}\n`,
    );
  }
  return report.ok ? exitCodes.success : exitCodes.sessionFailure;
}
