import { contentHash } from "../foundation/content-hash.js";
import type { TranscriptEntryInput } from "../session/transcript-sink.js";
import type { ToolResultInput } from "./commit-batch.js";

/**
 * The records a run store keeps beside a run's chain that resume, replay and the cache read (checkpoints and tool
 * results) are bound to the chain: each batch that stores such records also stores a RECORD entry naming their
 * content hashes, in the same transaction, chained like every other entry. Editing a stored checkpoint or tool
 * result, or adding one, then no longer matches the chain, and `verifyStoredRun` names the record.
 *
 * The RECORD entry's result, version 1:
 * `{ checkpoint?: { seq, hash }, tool_results?: [hash, ...] }`, the tool results in the order they are stored.
 */
export const boundRecordsVersion = 1;

export interface BoundRecords {
  readonly checkpoint?: { readonly seq: number; readonly hash: string };
  readonly tool_results?: readonly string[];
}

/** The content hash a checkpoint document is bound by: the document exactly as stored (its `v`, delta or whole). */
export function checkpointRecordHash(document: unknown): string {
  return contentHash({ kind: "charter.checkpoint-record", document, v: boundRecordsVersion });
}

/** The content hash a stored tool result is bound by: every field a resume or replay reads. */
export function toolResultRecordHash(record: ToolResultInput): string {
  return contentHash({
    call_id: record.callId,
    error_code: record.errorCode,
    kind: "charter.tool-result-record",
    request_hash: record.requestHash,
    result: record.result ?? null,
    server: record.server,
    status: record.status,
    tool_name: record.toolName,
    turn: record.turn,
    v: boundRecordsVersion,
  });
}

/** The RECORD entry binding `records`, placed after `last` (the entry before it: its turn and time). */
export function boundRecordsEntry(
  records: BoundRecords,
  last: { readonly turn: number; readonly timestamp: number; readonly seq: number },
): TranscriptEntryInput {
  return {
    state: "RECORD",
    step_id: `turn-${last.turn}/record-${last.seq + 1}`,
    turn: last.turn,
    timestamp: last.timestamp,
    action: { kind: "charter.bound-records", v: boundRecordsVersion },
    result: records,
    model_fingerprint: null,
  };
}
