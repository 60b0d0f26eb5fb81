import { createReadStream } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { CharterError } from "../foundation/charter-error.js";

/**
 * The run directory `charter verify` and `charter replay` fall back to for a run id the run store does not hold for
 * the tenant: `<runs-dir>/<run-id>`, unless its PRECHECK entry records another tenant (a run started with another
 * `--tenant`), which is then not found, as in the store. A directory without a readable first entry is returned as
 * it is, for the verification to report what is wrong with it.
 */
export async function runDirectoryOfTenant(
  runsDirectory: string,
  runId: string,
  tenantId: string | null,
): Promise<string> {
  const directory = join(runsDirectory, runId);
  const recorded = await recordedTenant(join(directory, "transcript.jsonl"));
  if (recorded === undefined || recorded === tenantId) return directory;
  throw new CharterError(
    "RUN_NOT_FOUND",
    `no run ${runId} ${tenantId === null ? "without a tenant" : `of tenant ${tenantId}`} in the run store or ${runsDirectory}`,
    { details: { runId, tenantId } },
  );
}

/** The tenant the transcript's first entry records (null: none), or undefined when it cannot be read. */
async function recordedTenant(transcript: string): Promise<string | null | undefined> {
  const stream = createReadStream(transcript, { encoding: "utf8" });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) {
      const entry = JSON.parse(line) as { action?: { run?: { tenant_id?: unknown } } };
      const tenant = entry.action?.run?.tenant_id;
      return typeof tenant === "string" ? tenant : null;
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    lines.close();
    stream.destroy();
  }
}
