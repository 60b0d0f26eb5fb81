import { CharterError } from "../foundation/charter-error.js";
import type { VerificationFailure, VerificationReport } from "../transcript/verification-report.js";
import { verifyEntries } from "../transcript/verify-transcript.js";
import type { RunStore } from "./run-store.js";
import { verifyBoundRecords } from "./verify-bound-records.js";
import { verifyStoredLines } from "./verify-stored-lines.js";

/**
 * Verifies a run held in a run store exactly as `verifyRunDirectory` verifies a run directory: the header
 * and the contract hash, then every stored line byte for byte (its action and result texts against their
 * hashes, its link against the chain, its raw payload references), then the raw payloads no entry
 * references. It also holds the run record to what the chain says: a record claiming more entries than are
 * stored (a truncated transcript) or another head is reported, and so is a checkpoint, tool result or run row
 * field the chain does not bind (RECORD_MISMATCH, naming the record). Throws RUN_NOT_FOUND for an unknown run.
 */
export async function verifyStoredRun(store: RunStore, runId: string): Promise<VerificationReport> {
  const run = await store.getRun(runId);
  if (run === null) {
    throw new CharterError("RUN_NOT_FOUND", `no stored run ${JSON.stringify(runId)}`, { details: { runId } });
  }
  // No entries and no payloads: this checks the header (its genesis hash) and the contract hash only.
  const headerCheck = verifyEntries(run.header, run.contract, [], new Map());
  if (!headerCheck.ok) return headerCheck;
  if (run.header.run_id !== runId) {
    return failed(0, headerCheck.head_hash, {
      seq: null,
      step_id: null,
      reason_code: "CHAIN_LINK_MISMATCH",
      detail: `the stored header names run ${run.header.run_id}, not ${runId}`,
    });
  }

  const verifier = await verifyStoredLines(store, runId, run.header, run.entryCount);
  const { rawIndex } = verifier;
  if (verifier.failure !== null) return failed(verifier.verified, verifier.headHash, verifier.failure);

  if (run.entryCount !== verifier.verified) {
    return failed(verifier.verified, verifier.headHash, {
      seq: verifier.verified,
      step_id: null,
      reason_code: "SEQUENCE_GAP",
      detail: `the run record counts ${run.entryCount} entries but ${verifier.verified} are stored`,
    });
  }
  if (run.headHash !== verifier.headHash) {
    return failed(verifier.verified, verifier.headHash, {
      seq: null,
      step_id: null,
      reason_code: "CHAIN_LINK_MISMATCH",
      detail: `the run record's head hash is ${run.headHash} but the stored chain ends at ${verifier.headHash}`,
    });
  }
  const corrupt = [...rawIndex].filter(([, intact]) => !intact).map(([hash]) => hash);
  if (corrupt.length > 0) {
    corrupt.sort();
    return failed(verifier.verified, verifier.headHash, {
      seq: null,
      step_id: null,
      reason_code: "RAW_PAYLOAD_HASH_MISMATCH",
      detail: `raw payload ${corrupt[0]} does not hash to its name, or names a request part that is missing or damaged`,
    });
  }
  // The records kept beside the chain (checkpoints, tool results, the run row) against what the chain binds.
  const record = await verifyBoundRecords(store, run);
  if (record !== null) return failed(verifier.verified, verifier.headHash, record);
  return { ok: true, entries: verifier.verified, head_hash: verifier.headHash, first_bad_entry: null };
}

function failed(entries: number, headHash: string | null, failure: VerificationFailure): VerificationReport {
  return { ok: false, entries, head_hash: headHash, first_bad_entry: failure };
}
