import { CharterError } from "../foundation/charter-error.js";
import type { RunStore } from "../store/run-store.js";
import { verifyStoredRun } from "../store/verify-stored-run.js";

/**
 * Verifies a stored run before a resume or a replay reads anything of it to act on: a run whose chain, or whose
 * checkpoints, tool results or run row the chain does not bind, is refused with RUN_TAMPERED naming the record
 * (`details.record`, or the entry's `seq`), rather than continued from a forged conversation.
 */
export async function assertRunUntampered(store: RunStore, runId: string): Promise<void> {
  const report = await verifyStoredRun(store, runId);
  if (report.ok) return;
  const bad = report.first_bad_entry;
  const where = bad?.record ?? (bad?.seq !== null && bad?.seq !== undefined ? `entry ${bad.seq}` : "the run");
  throw new CharterError(
    "RUN_TAMPERED",
    `run ${runId} does not verify (${where}: ${bad?.reason_code}: ${bad?.detail}): it is not continued; \`charter verify ${runId}\` reports the same`,
    {
      details: {
        runId,
        record: where,
        reasonCode: bad?.reason_code ?? null,
        seq: bad?.seq ?? null,
        detail: bad?.detail ?? null,
      },
    },
  );
}
