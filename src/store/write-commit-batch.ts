import type { Kysely } from "kysely";
import type { CommitBatch, CommitReceipt, RunFinish, StoredEntryInput } from "./commit-batch.js";
import { encodeRunSegment, runSegmentVersion, unsegmentableText } from "./run-segment.js";
import type { StatementProgram } from "./statement-program.js";
import type { StoreDatabase } from "./store-database.js";
import { runNotFound, storeError } from "./store-errors.js";
import { storeRecordVersion } from "./store-record-version.js";
import type { StoreStatements } from "./store-statements.js";

/**
 * Checks a batch on its own (before any database work): its entries are consecutive and linked, and its
 * checkpoint covers a COMMIT entry of the batch. Throws ARGUMENT_INVALID (`batch_invalid`).
 */
export function checkCommitBatch(batch: CommitBatch): void {
  const entries = batch.entries ?? [];
  for (let index = 1; index < entries.length; index++) {
    const previous = (entries[index - 1] as StoredEntryInput).entry;
    const entry = (entries[index] as StoredEntryInput).entry;
    if (entry.seq !== previous.seq + 1 || entry.prev_hash !== previous.hash) {
      throw storeError("batch_invalid", "the batch's entries are not consecutive links of one chain", {
        runId: batch.runId,
        seq: entry.seq,
        previousSeq: previous.seq,
      });
    }
  }
  const unsegmentable =
    entries
      .map(({ line }) => unsegmentableText("entry line", withoutNewline(line)))
      .find((reason) => reason !== null) ??
    (batch.rawPayloads ?? [])
      .flatMap(({ hash, json }) => [
        unsegmentableText("raw payload hash", hash),
        unsegmentableText("raw payload", json),
      ])
      .find((reason) => reason !== null) ??
    null;
  if (unsegmentable !== null) {
    throw storeError("batch_invalid", `the batch cannot be stored: ${unsegmentable}`, { runId: batch.runId });
  }
  const checkpoint = batch.checkpoint;
  if (checkpoint === undefined || checkpoint === null) return;
  const covered = entries.find((stored) => stored.entry.seq === checkpoint.seq);
  // A checkpoint covers a COMMIT, or (kind `before_execute`) the last entry before tools execute.
  const beforeExecute = (checkpoint.document as { kind?: unknown } | null)?.kind === "before_execute";
  if (covered === undefined || (covered.entry.state !== "COMMIT" && !beforeExecute)) {
    throw storeError(
      "batch_invalid",
      "a checkpoint must cover a COMMIT entry written in the same batch (seed 003 INV-CP-001)",
      { runId: batch.runId, seq: checkpoint.seq, state: covered?.entry.state ?? null },
    );
  }
  const version = (checkpoint.document as { v?: unknown } | null)?.v;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1) {
    throw storeError("batch_invalid", "a checkpoint document must carry its format version v", {
      runId: batch.runId,
      seq: checkpoint.seq,
    });
  }
}

interface UpdatedRun {
  readonly entry_count: number;
  readonly head_hash: string;
  readonly accounting_count: number;
  readonly tool_result_count: number;
  readonly segment_count: number;
}

/**
 * The statements of a checked batch, for one transaction. The first updates the run row only if the batch
 * continues it (status `running`, entry count and head hash as the batch expects): it fences concurrent
 * writers without a read, takes the write lock at once, and numbers the accounting entries and tool results
 * through RETURNING. The batch's records follow as ONE segment row (see run-segment.ts), and its tool outputs;
 * any failure rolls the whole batch back.
 */
export function* commitBatchProgram(
  database: Kysely<StoreDatabase>,
  statements: StoreStatements,
  batch: CommitBatch,
  finish: RunFinish | null,
  now: number,
): StatementProgram<CommitReceipt> {
  const { runId } = batch;
  const entries = batch.entries ?? [];
  const accounting = batch.accounting ?? [];
  const toolResults = batch.toolResults ?? [];
  const first = entries[0]?.entry;
  const last = entries[entries.length - 1]?.entry;
  const rawPayloads = batch.rawPayloads ?? [];
  const checkpoint = batch.checkpoint ?? null;
  const storesSegment =
    entries.length + rawPayloads.length + accounting.length + toolResults.length > 0 || checkpoint !== null;

  const updated = (yield statements.updateRun({
    runId,
    now,
    entries:
      first !== undefined && last !== undefined
        ? { firstSeq: first.seq, prevHash: first.prev_hash, entryCount: last.seq + 1, headHash: last.hash }
        : null,
    accountingAdded: accounting.length,
    toolResultsAdded: toolResults.length,
    segmentAdded: storesSegment,
    totals: batch.totals ?? null,
    finish,
  }))[0] as UpdatedRun | undefined;
  if (updated === undefined) {
    const stored = (yield database
      .selectFrom("charter_runs")
      .select(["status", "entry_count", "head_hash"])
      .where("run_id", "=", runId)
      .compile())[0] as { status: string; entry_count: number; head_hash: string } | undefined;
    throw explainRefusal(batch, stored);
  }

  if (storesSegment) {
    const firstAccounting = updated.accounting_count - accounting.length;
    const firstToolResult = updated.tool_result_count - toolResults.length;
    const covered =
      checkpoint === null ? null : entries.find((stored) => stored.entry.seq === checkpoint.seq)?.entry;
    const encoded = encodeRunSegment({
      entries: entries.map(({ line }) => withoutNewline(line)),
      rawPayloads,
      accounting: accounting.map((entry, index) => ({ position: firstAccounting + index, entry })),
      toolResults: toolResults.map((input, index) => ({ position: firstToolResult + index, input })),
      checkpoint:
        checkpoint === null
          ? null
          : { seq: checkpoint.seq, turn: covered?.turn ?? 0, document: checkpoint.document },
    });
    let rawBytes = 0;
    for (const payload of rawPayloads) rawBytes += Buffer.byteLength(payload.json);
    yield* statements.insertRows("charter_run_segments", [
      {
        run_id: runId,
        position: updated.segment_count - 1,
        v: runSegmentVersion,
        first_seq: first?.seq ?? updated.entry_count,
        entry_count: entries.length,
        checkpoint_seq: checkpoint?.seq ?? null,
        raw_count: rawPayloads.length,
        raw_bytes: rawBytes,
        created_at: now,
        records: encoded.records,
        entries: encoded.entries,
      },
    ]);
  }
  // Rare (an output too large for the conversation), and unique per handle: kept in their table.
  yield* statements.insertRows(
    "charter_tool_outputs",
    (batch.toolOutputs ?? []).map((output) => ({
      run_id: runId,
      handle: output.handle,
      v: storeRecordVersion,
      tool_name: output.toolName,
      call_id: output.callId,
      bytes: output.bytes,
      lines: output.lines,
      path: output.path,
      created_at: now,
    })),
  );
  return { entryCount: updated.entry_count, headHash: updated.head_hash };
}

/** An entry's line as stored: without the newline the transcript module may end it with. */
function withoutNewline(line: string): string {
  return line.endsWith("\n") ? line.slice(0, -1) : line;
}

/** Why the fencing update matched no row: the run is missing, not running, or the chain moved on. */
function explainRefusal(
  batch: CommitBatch,
  run: { status: string; entry_count: number; head_hash: string } | undefined,
): Error {
  if (run === undefined) return runNotFound(batch.runId);
  if (run.status !== "running") {
    return storeError("run_not_running", `run ${batch.runId} is ${run.status}: nothing can be appended`, {
      runId: batch.runId,
      status: run.status,
    });
  }
  const first = batch.entries?.[0]?.entry;
  return storeError(
    "chain_mismatch",
    `the batch does not continue run ${batch.runId}: it starts at seq ${first?.seq} after ${first?.prev_hash}, the stored chain has ${run.entry_count} entries ending at ${run.head_hash}`,
    {
      runId: batch.runId,
      expectedSeq: run.entry_count,
      batchSeq: first?.seq ?? null,
      storedHead: run.head_hash,
      batchPrev: first?.prev_hash ?? null,
    },
  );
}
