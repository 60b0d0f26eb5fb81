import type { CommitBatch, CommitReceipt, RunFinish, StoredEntryInput } from "./commit-batch.js";
import { type RunProgress, readRunProgress } from "./run-progress.js";
import { encodeRunSegment, runSegmentVersion, unsegmentableText } from "./run-segment.js";
import type { StatementProgram } from "./statement-program.js";
import { runNotFound, runNotRunning, storeError } from "./store-errors.js";
import type { StoreStatements } from "./store-statements.js";
import { toolOutputRow } from "./tool-output-row.js";

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
  let unsegmentable: string | null = null;
  for (let index = 0; index < entries.length && unsegmentable === null; index++) {
    unsegmentable = unsegmentableText(
      "entry line",
      withoutNewline((entries[index] as StoredEntryInput).line),
    );
  }
  for (const { hash, json } of batch.rawPayloads ?? []) {
    unsegmentable ??= unsegmentableText("raw payload hash", hash) ?? unsegmentableText("raw payload", json);
  }
  if (unsegmentable !== null) {
    throw storeError("batch_invalid", `the batch cannot be stored: ${unsegmentable}`, { runId: batch.runId });
  }
  const checkpoint = batch.checkpoint;
  if (checkpoint === undefined || checkpoint === null) return;
  const covered = entries.find((stored) => stored.entry.seq === checkpoint.seq);
  // A checkpoint covers a COMMIT, or (kind `before_execute`) the last entry before tools execute; a workflow's
  // checkpoint (kind `workflow`) covers its WORKFLOW_CHECKPOINT entry.
  const kind = (checkpoint.document as { kind?: unknown } | null)?.kind;
  const coverable =
    kind === "workflow"
      ? covered?.entry.state === "WORKFLOW_CHECKPOINT"
      : covered?.entry.state === "COMMIT" || (covered !== undefined && kind === "before_execute");
  if (covered === undefined || !coverable) {
    throw storeError(
      "batch_invalid",
      // seed 003 INV-CP-001
      "a checkpoint must cover a COMMIT entry (or, before tools execute, the entry before them) written in the same batch",
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

/** What a batch's transaction yields: its receipt, and the run's progress after it (for the next batch). */
export interface CommittedBatch {
  readonly receipt: CommitReceipt;
  readonly progress: RunProgress;
}

/**
 * The statements of a checked batch, for one transaction.
 *
 * The run's progress (run-progress.ts) is `known` when this store created the run or wrote its previous batch,
 * and read otherwise, with the run's status, which must be `running`. The batch continues the progress only if
 * its first entry follows the progress's chain head; it numbers the batch's accounting entries and tool
 * results. The batch's records follow as ONE segment row (see run-segment.ts) carrying the progress after it,
 * then its tool outputs; the last batch also brings the run row up to date and stops the run, and always stores
 * a segment (an empty one when it has nothing else to store). Any failure rolls the whole batch back.
 *
 * A batch with `known` progress reads nothing: its segment's key is the fence. Segments are numbered densely
 * per run, and whatever another process did to the run since this store's last batch took the position this
 * batch's segment would: its appends, and stopping the run, which stores a segment too (the only other change
 * of status, reopening, applies to a stopped run). So the insert of a stale writer (a second resume, say) fails
 * on the primary key (`duplicate_record`; on PostgreSQL after waiting for the other transaction to end), and the
 * store retries with the progress and status read afresh (see create-kysely-run-store.ts), which refuses the
 * batch as `chain_mismatch` or `run_not_running`.
 */
export function* commitBatchProgram(
  statements: StoreStatements,
  batch: CommitBatch,
  finish: RunFinish | null,
  now: number,
  known: RunProgress | null,
): StatementProgram<CommittedBatch> {
  const { runId } = batch;
  const entries = batch.entries ?? [];
  const accounting = batch.accounting ?? [];
  const toolResults = batch.toolResults ?? [];
  const first = entries[0]?.entry;
  const last = entries[entries.length - 1]?.entry;
  const rawPayloads = batch.rawPayloads ?? [];
  const checkpoint = batch.checkpoint ?? null;
  // A stop takes a segment position, so that a writer whose view of the run is older is fenced (see above).
  const storesSegment =
    finish !== null ||
    entries.length + rawPayloads.length + accounting.length + toolResults.length > 0 ||
    checkpoint !== null;

  let progress: RunProgress;
  if (known !== null && storesSegment) {
    progress = known;
  } else {
    const read = yield* readRunProgress(statements, runId);
    if (read === null) throw runNotFound(runId);
    if (read.status !== "running") throw runNotRunning(runId, read.status);
    progress = read.progress;
  }
  if (first !== undefined && (first.seq !== progress.entryCount || first.prev_hash !== progress.headHash)) {
    throw storeError(
      "chain_mismatch",
      `the batch does not continue run ${runId}: it starts at seq ${first.seq} after ${first.prev_hash}, the stored chain has ${progress.entryCount} entries ending at ${progress.headHash}`,
      {
        runId,
        expectedSeq: progress.entryCount,
        batchSeq: first.seq,
        storedHead: progress.headHash,
        batchPrev: first.prev_hash,
      },
    );
  }
  const next: RunProgress = {
    entryCount: last === undefined ? progress.entryCount : last.seq + 1,
    headHash: last === undefined ? progress.headHash : last.hash,
    accountingCount: progress.accountingCount + accounting.length,
    toolResultCount: progress.toolResultCount + toolResults.length,
    segmentCount: progress.segmentCount + (storesSegment ? 1 : 0),
    totals: batch.totals ?? progress.totals,
    updatedAt: now,
  };

  if (storesSegment) {
    const covered =
      checkpoint === null ? null : entries.find((stored) => stored.entry.seq === checkpoint.seq)?.entry;
    const encoded = encodeRunSegment({
      entries: entries.map(({ line }) => withoutNewline(line)),
      rawPayloads,
      accounting: accounting.map((entry, index) => ({ position: progress.accountingCount + index, entry })),
      toolResults: toolResults.map((input, index) => ({ position: progress.toolResultCount + index, input })),
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
        position: progress.segmentCount,
        v: runSegmentVersion,
        first_seq: first?.seq ?? progress.entryCount,
        entry_count: entries.length,
        checkpoint_seq: checkpoint?.seq ?? null,
        raw_count: rawPayloads.length,
        raw_bytes: rawBytes,
        created_at: now,
        records: encoded.records,
        entries: encoded.entries,
        run_entry_count: next.entryCount,
        head_hash: next.headHash,
        accounting_count: next.accountingCount,
        tool_result_count: next.toolResultCount,
        turns: next.totals.turns,
        tokens_in: next.totals.tokensIn,
        tokens_out: next.totals.tokensOut,
        cost_usd: next.totals.costUsd,
        tools_used_json: JSON.stringify(next.totals.toolsUsed),
      },
    ]);
  }
  if (finish !== null) {
    // No row when the run is not running, which its segment's key has ruled out unless a writer older than
    // this rule stopped it without a segment: refused then, and the whole batch rolled back.
    const finished = yield statements.finishRunRow({ runId, progress: next, finish });
    if (finished.length === 0) throw runNotRunning(runId, "stopped");
  }
  // Rare (an output too large for the conversation), and unique per handle: kept in their table.
  yield* statements.insertRows(
    "charter_tool_outputs",
    (batch.toolOutputs ?? []).map((output) => toolOutputRow(runId, output, now)),
  );
  return { receipt: { entryCount: next.entryCount, headHash: next.headHash }, progress: next };
}

/** An entry's line as stored: without the newline the transcript module may end it with. */
function withoutNewline(line: string): string {
  return line.endsWith("\n") ? line.slice(0, -1) : line;
}
