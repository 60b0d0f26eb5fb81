import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { CharterError } from "../foundation/charter-error.js";
import { verifyStoredRun } from "../store/verify-stored-run.js";
import { verifyRunDirectory } from "../transcript/verify-transcript.js";
import type { CliStreams } from "./cli-streams.js";
import { exitCodes } from "./exit-code.js";
import { openCliStore } from "./open-cli-store.js";

/** A run id: the run store first, then the runs directory. */
async function verifyById(
  runId: string,
  values: { "runs-dir"?: string; store?: string; config?: string },
  streams: CliStreams,
) {
  const store = await openCliStore(values, streams);
  try {
    if ((await store.getRun(runId)) !== null) return await verifyStoredRun(store, runId);
  } finally {
    await store.close();
  }
  return verifyRunDirectory(join(values["runs-dir"] ?? join(homedir(), ".charter", "runs"), runId));
}

/** `charter verify <run-dir|run-id>`: recomputes the chain and names the first bad entry. */
export async function verifyCommand(
  positionals: readonly string[],
  values: { json?: boolean; "runs-dir"?: string; store?: string; config?: string },
  streams: CliStreams,
): Promise<number> {
  const [target] = positionals;
  if (target === undefined) {
    throw new CharterError("ARGUMENT_INVALID", "charter verify needs a run directory or run id", {
      details: { argument: "run" },
    });
  }
  const report = existsSync(target)
    ? await verifyRunDirectory(resolve(target))
    : await verifyById(target, values, streams);
  if (values.json) streams.stdout.write(`${JSON.stringify(report)}\n`);
  else if (report.ok) streams.stdout.write(`verified: ${report.entries} entries, head ${report.head_hash}\n`);
  else {
    const bad = report.first_bad_entry;
    streams.stdout.write(
      `NOT verified: entry ${bad?.seq} (${bad?.step_id}): ${bad?.reason_code}: ${bad?.detail}\n`,
    );
  }
  return report.ok ? exitCodes.success : exitCodes.sessionFailure;
}
