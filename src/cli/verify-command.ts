import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { CharterError } from "../foundation/charter-error.js";
import { verifyRunDirectory } from "../transcript/verify-transcript.js";
import type { CliStreams } from "./cli-streams.js";
import { exitCodes } from "./exit-code.js";

/** `charter verify <run-dir|run-id>`: recomputes the chain and names the first bad entry. */
export async function verifyCommand(
  positionals: readonly string[],
  values: { json?: boolean; "runs-dir"?: string },
  streams: CliStreams,
): Promise<number> {
  const [target] = positionals;
  if (target === undefined) {
    throw new CharterError("ARGUMENT_INVALID", "charter verify needs a run directory or run id", {
      details: { argument: "run" },
    });
  }
  const directory = existsSync(target)
    ? resolve(target)
    : join(values["runs-dir"] ?? join(homedir(), ".charter", "runs"), target);
  const report = await verifyRunDirectory(directory);
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
