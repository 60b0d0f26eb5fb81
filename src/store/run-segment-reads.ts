import type { Kysely } from "kysely";
import type { AccountingEntry } from "../session/accounting-entry.js";
import type { RawPayloadInput } from "./commit-batch.js";
import {
  decodeCheckpointRecord,
  decodeRawRecord,
  decodeToolResultRecord,
  type SegmentTag,
  type SegmentToolResult,
  segmentEntryLines,
  segmentRecords,
  splitNumbered,
} from "./run-segment.js";
import type { StoreDatabase } from "./store-database.js";
import { storeError } from "./store-errors.js";
import type { StoreGuard } from "./store-guard.js";
import type { CheckpointRecord, StoredEntryLineText } from "./stored-records.js";

/** Segments read per query, at most; fewer when they hold many entries (see `segments`). */
const segmentsPerQuery = 256;
/** Entries a query of entry lines aims at: large segments (an import's, a long flush) are read a few at a time. */
const entriesPerQuery = 4096;

interface SegmentRow {
  readonly position: number;
  readonly first_seq: number;
  readonly entry_count: number;
  readonly created_at: number;
  readonly text: string;
}

/**
 * Reads of what a run stored in segments (schema 2, see run-segment.ts): each yields the run's records of one
 * kind in the order they were committed. The run store reads a run's rows of the older tables first, then these.
 * A segment's `entry_count` only sizes queries and statistics: entries are numbered from `first_seq` by the lines
 * themselves, and `first_seq` is what verification checks.
 */
export function createSegmentReads(database: Kysely<StoreDatabase>, guard: StoreGuard) {
  /** Where reading entries from `fromSeq` starts: the last segment whose entries start at or before it. */
  async function startPosition(operation: string, runId: string, fromSeq: number): Promise<number> {
    if (fromSeq <= 0) return 0;
    const row = await guard(operation, { runId, fromSeq }, () =>
      database
        .selectFrom("charter_run_segments")
        .select("position")
        .where("run_id", "=", runId)
        .where("first_seq", "<=", fromSeq)
        .orderBy("position", "desc")
        .limit(1)
        .executeTakeFirst(),
    );
    return row?.position ?? 0;
  }

  /**
   * The run's segments in order from `from` (a position), a query at a time, with one of their two texts;
   * `withRaw` skips those without raw payloads.
   */
  async function* segments(
    operation: string,
    runId: string,
    column: "entries" | "records",
    filter: { readonly from?: number; readonly withRaw?: boolean } = {},
  ): AsyncGenerator<readonly SegmentRow[]> {
    let after = (filter.from ?? 0) - 1;
    let limit = segmentsPerQuery;
    for (;;) {
      const rows = await guard(operation, { runId }, () => {
        let select = database
          .selectFrom("charter_run_segments")
          .select(["position", "first_seq", "entry_count", "created_at", `${column} as text`])
          .where("run_id", "=", runId)
          .where("position", ">", after);
        if (filter.withRaw === true) select = select.where("raw_count", ">", 0);
        return select.orderBy("position").limit(limit).execute();
      });
      if (rows.length > 0) yield rows;
      if (rows.length < limit) return;
      after = (rows[rows.length - 1] as SegmentRow).position;
      if (column === "entries") {
        let entries = 0;
        for (const row of rows) entries += row.entry_count;
        limit = Math.max(
          1,
          Math.min(segmentsPerQuery, Math.floor((limit * entriesPerQuery) / Math.max(entries, 1))),
        );
      }
    }
  }

  /** The run's records of one tag, each with the segment it is in, in commit order. */
  async function* tagged(
    operation: string,
    runId: string,
    tag: SegmentTag,
    filter: { readonly withRaw?: boolean } = {},
  ): AsyncGenerator<{ readonly record: string; readonly row: SegmentRow }> {
    for await (const rows of segments(operation, runId, "records", filter)) {
      for (const row of rows) for (const record of segmentRecords(row.text, tag)) yield { record, row };
    }
  }

  async function collect<T>(
    records: AsyncIterable<{ record: string; row: SegmentRow }>,
    decode: (record: string, row: SegmentRow) => T,
  ) {
    const decoded: T[] = [];
    for await (const { record, row } of records) decoded.push(decode(record, row));
    return decoded;
  }

  return {
    /** The entry lines from `fromSeq`, with their seq, in pages of `pageSize`. */
    async *entryLinePages(
      operation: string,
      runId: string,
      fromSeq: number,
      pageSize: number,
    ): AsyncGenerator<StoredEntryLineText[]> {
      let page: StoredEntryLineText[] = [];
      const from = await startPosition(operation, runId, fromSeq);
      for await (const rows of segments(operation, runId, "entries", { from })) {
        for (const row of rows) {
          const lines = segmentEntryLines(row.text);
          for (let index = 0; index < lines.length; index++) {
            const seq = row.first_seq + index;
            if (seq < fromSeq) continue;
            page.push({ seq, line: lines[index] as string });
            if (page.length === pageSize) {
              yield page;
              page = [];
            }
          }
        }
      }
      if (page.length > 0) yield page;
    },

    /** The run's raw payloads not in `seen` (which collects them), each once, in pages of `pageSize`. */
    async *rawPayloadPages(
      operation: string,
      runId: string,
      pageSize: number,
      seen: Set<string>,
    ): AsyncGenerator<RawPayloadInput[]> {
      let page: RawPayloadInput[] = [];
      for await (const { record } of tagged(operation, runId, "R", { withRaw: true })) {
        const payload = decodeRawRecord(record);
        if (seen.has(payload.hash)) continue;
        seen.add(payload.hash);
        page.push(payload);
        if (page.length === pageSize) {
          yield page;
          page = [];
        }
      }
      if (page.length > 0) yield page;
    },

    async readRaw(runId: string, hash: string): Promise<string | null> {
      for await (const { record } of tagged("readRaw", runId, "R", { withRaw: true })) {
        if (record.startsWith(hash) && record.charCodeAt(hash.length) === 32)
          return record.slice(hash.length + 1);
      }
      return null;
    },

    /** The checkpoint covering `seq`, or with `seq` null the latest one. */
    checkpoint: (runId: string, seq: number | null, operation: string) =>
      guard(operation, { runId, seq }, async (): Promise<CheckpointRecord | null> => {
        let select = database
          .selectFrom("charter_run_segments")
          .select(["records", "created_at", "checkpoint_seq"])
          .where("run_id", "=", runId);
        select =
          seq === null
            ? select.where("checkpoint_seq", "is not", null).orderBy("position", "desc")
            : select.where("checkpoint_seq", "=", seq);
        const row = await select.limit(1).executeTakeFirst();
        if (row === undefined) return null;
        const record = segmentRecords(row.records, "C")[0];
        const checkpoint = record === undefined ? null : decodeCheckpointRecord(record);
        // The column a checkpoint is selected by must say what the record holds.
        if (checkpoint === null || checkpoint.seq !== row.checkpoint_seq) {
          throw storeError(
            "record_corrupt",
            `run ${runId}: a segment's checkpoint is not the one it is stored as`,
            {
              runId,
              checkpointSeq: row.checkpoint_seq,
              recordSeq: checkpoint?.seq ?? null,
            },
          );
        }
        return { runId, ...checkpoint, createdAt: row.created_at };
      }),

    /** Every checkpoint of the run, in seq order. */
    allCheckpoints: (runId: string): Promise<CheckpointRecord[]> =>
      collect(tagged("exportRun", runId, "C"), (record, row) => ({
        runId,
        ...decodeCheckpointRecord(record),
        createdAt: row.created_at,
      })),

    accounting: (runId: string): Promise<AccountingEntry[]> =>
      collect(
        tagged("readAccounting", runId, "A"),
        (record) => JSON.parse(splitNumbered(record).rest) as AccountingEntry,
      ),

    toolResults: (runId: string): Promise<(SegmentToolResult & { readonly createdAt: number })[]> =>
      collect(tagged("readToolResults", runId, "T"), (record, row) => ({
        ...decodeToolResultRecord(record),
        createdAt: row.created_at,
      })),
  };
}

export type SegmentReads = ReturnType<typeof createSegmentReads>;
