import type { Kysely } from "kysely";
import type { AccountingEntry } from "../session/accounting-entry.js";
import type { RawPayloadInput } from "./commit-batch.js";
import {
  decodeCheckpointRecord,
  decodeRawRecord,
  decodeToolResultRecord,
  type SegmentToolResult,
  segmentEntryLines,
  segmentRecords,
  splitNumbered,
} from "./run-segment.js";
import type { StoreDatabase } from "./store-database.js";
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
 */
export function createSegmentReads(database: Kysely<StoreDatabase>, guard: StoreGuard) {
  /**
   * The run's segments in order, a query at a time, with one of their two texts; `fromSeq` skips segments whose
   * entries all come before it, `withRaw` those without raw payloads.
   */
  async function* segments(
    operation: string,
    runId: string,
    column: "entries" | "records",
    filter: { readonly fromSeq?: number; readonly withRaw?: boolean } = {},
  ): AsyncGenerator<readonly SegmentRow[]> {
    let after = -1;
    let limit = segmentsPerQuery;
    for (;;) {
      const rows = await guard(operation, { runId }, () => {
        let select = database
          .selectFrom("charter_run_segments")
          .select(["position", "first_seq", "entry_count", "created_at", `${column} as text`])
          .where("run_id", "=", runId)
          .where("position", ">", after);
        if (filter.fromSeq !== undefined && filter.fromSeq > 0) {
          const fromSeq = filter.fromSeq;
          select = select.where((expression) =>
            expression(expression("first_seq", "+", expression.ref("entry_count")), ">", fromSeq),
          );
        }
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

  return {
    /** The entry lines from `fromSeq`, with their seq, in pages of `pageSize`. */
    async *entryLinePages(
      operation: string,
      runId: string,
      fromSeq: number,
      pageSize: number,
    ): AsyncGenerator<StoredEntryLineText[]> {
      let page: StoredEntryLineText[] = [];
      for await (const rows of segments(operation, runId, "entries", { fromSeq })) {
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

    /** The run's raw payloads, each once, a query's worth at a time. */
    async *rawPayloadPages(operation: string, runId: string): AsyncGenerator<RawPayloadInput[]> {
      const seen = new Set<string>();
      for await (const rows of segments(operation, runId, "records", { withRaw: true })) {
        const page: RawPayloadInput[] = [];
        for (const row of rows) {
          for (const record of segmentRecords(row.text, "R")) {
            const payload = decodeRawRecord(record);
            if (seen.has(payload.hash)) continue;
            seen.add(payload.hash);
            page.push(payload);
          }
        }
        if (page.length > 0) yield page;
      }
    },

    async readRaw(runId: string, hash: string): Promise<string | null> {
      for await (const rows of segments("readRaw", runId, "records", { withRaw: true })) {
        for (const row of rows) {
          for (const record of segmentRecords(row.text, "R")) {
            if (record.startsWith(hash) && record.charCodeAt(hash.length) === 32) {
              return record.slice(hash.length + 1);
            }
          }
        }
      }
      return null;
    },

    /** The checkpoint covering `seq`, or with `seq` null the latest one. */
    checkpoint: (runId: string, seq: number | null, operation: string) =>
      guard(operation, { runId, seq }, async (): Promise<CheckpointRecord | null> => {
        let select = database
          .selectFrom("charter_run_segments")
          .select(["records", "created_at"])
          .where("run_id", "=", runId);
        select =
          seq === null
            ? select.where("checkpoint_seq", "is not", null).orderBy("position", "desc")
            : select.where("checkpoint_seq", "=", seq);
        const row = await select.limit(1).executeTakeFirst();
        const record = row === undefined ? undefined : segmentRecords(row.records, "C")[0];
        if (row === undefined || record === undefined) return null;
        const checkpoint = decodeCheckpointRecord(record);
        return { runId, ...checkpoint, createdAt: row.created_at };
      }),

    /** Every checkpoint of the run, in seq order. */
    async allCheckpoints(runId: string): Promise<CheckpointRecord[]> {
      const checkpoints: CheckpointRecord[] = [];
      for await (const rows of segments("exportRun", runId, "records")) {
        for (const row of rows) {
          for (const record of segmentRecords(row.text, "C")) {
            checkpoints.push({ runId, ...decodeCheckpointRecord(record), createdAt: row.created_at });
          }
        }
      }
      return checkpoints;
    },

    async accounting(runId: string): Promise<AccountingEntry[]> {
      const entries: AccountingEntry[] = [];
      for await (const rows of segments("readAccounting", runId, "records")) {
        for (const row of rows) {
          for (const record of segmentRecords(row.text, "A")) {
            entries.push(JSON.parse(splitNumbered(record).rest) as AccountingEntry);
          }
        }
      }
      return entries;
    },

    async toolResults(runId: string): Promise<(SegmentToolResult & { readonly createdAt: number })[]> {
      const results: (SegmentToolResult & { readonly createdAt: number })[] = [];
      for await (const rows of segments("readToolResults", runId, "records")) {
        for (const row of rows) {
          for (const record of segmentRecords(row.text, "T")) {
            results.push({ ...decodeToolResultRecord(record), createdAt: row.created_at });
          }
        }
      }
      return results;
    },
  };
}

export type SegmentReads = ReturnType<typeof createSegmentReads>;
