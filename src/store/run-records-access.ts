import type { Kysely } from "kysely";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { AccountingEntry } from "../session/accounting-entry.js";
import type { TranscriptEntry } from "../transcript/transcript-entry.js";
import type { CheckpointDocument, ToolOutputInput } from "./commit-batch.js";
import { createSegmentReads } from "./run-segment-reads.js";
import type { PageOptions, RunStore } from "./run-store.js";
import type { StoreDatabase } from "./store-database.js";
import { runNotFound, storeError } from "./store-errors.js";
import type { StoreGuard } from "./store-guard.js";
import type {
  CheckpointRecord,
  StoredEntryLine,
  StoredEntryLineText,
  StoredRawPayload,
} from "./stored-records.js";
import { toolOutputRow } from "./tool-output-row.js";

/** Rows read per query when a run's entries or payloads are streamed. */
const defaultPageSize = 1000;
const maximumPageSize = 10_000;

function pageSizeOf(options: PageOptions): number {
  return Math.min(Math.max(Math.trunc(options.pageSize ?? defaultPageSize), 1), maximumPageSize);
}

export type RunRecordsAccess = Pick<
  RunStore,
  | "readEntryLines"
  | "readEntryLineTexts"
  | "readEntries"
  | "readRaw"
  | "readRunRawPayloads"
  | "latestCheckpoint"
  | "readCheckpoint"
  | "readAccounting"
  | "readToolResults"
  | "recordToolOutput"
  | "listToolOutputs"
>;

/**
 * The store's reads of what a run recorded (entries, payloads, checkpoints...) and its tool outputs. A run's
 * records are in the tables of schema 1 (runs stored, or imported, that way) and then in its segments (every
 * transaction since schema 2; see run-segment.ts): each read returns the former first, then the latter.
 */
export function createRunRecordsAccess(
  database: Kysely<StoreDatabase>,
  guard: StoreGuard,
  environment: RuntimeEnvironment,
): RunRecordsAccess & { readonly allCheckpoints: (runId: string) => Promise<CheckpointRecord[]> } {
  const segments = createSegmentReads(database, guard);

  /** Pages of a run's entry rows in seq order from `fromSeq`, each page read by `readPage` under the guard. */
  async function* pagedBySeq<Row extends { readonly seq: number }>(
    operation: string,
    runId: string,
    fromSeq: number,
    pageSize: number,
    readPage: (fromSeq: number) => Promise<Row[]>,
  ): AsyncGenerator<readonly Row[]> {
    let next = fromSeq;
    for (;;) {
      const rows = await guard(operation, { runId }, () => readPage(next));
      if (rows.length > 0) yield rows;
      if (rows.length < pageSize) return;
      next = (rows[rows.length - 1]?.seq ?? next) + 1;
    }
  }

  function entryPage(runId: string, fromSeq: number, pageSize: number) {
    return database
      .selectFrom("charter_transcript_entries")
      .where("run_id", "=", runId)
      .where("seq", ">=", fromSeq)
      .orderBy("seq")
      .limit(pageSize);
  }

  /**
   * A run's entries from `fromSeq`: the pages of its schema 1 rows (`readPage`), then those of its segments from the
   * seq after the last row, each segment line turned into the same record by `fromSegment`.
   */
  async function* schemaOneThenSegments<Row extends { readonly seq: number }>(
    operation: string,
    runId: string,
    fromSeq: number,
    pageSize: number,
    readPage: (fromSeq: number) => Promise<Row[]>,
    fromSegment: (line: StoredEntryLineText) => Row,
  ): AsyncGenerator<readonly Row[]> {
    let next = fromSeq;
    for await (const page of pagedBySeq(operation, runId, fromSeq, pageSize, readPage)) {
      yield page;
      next = (page[page.length - 1] as Row).seq + 1;
    }
    for await (const page of segments.entryLinePages(operation, runId, next, pageSize)) {
      yield page.map(fromSegment);
    }
  }

  function pagedEntryLines(
    runId: string,
    fromSeq: number,
    pageSize: number,
  ): AsyncGenerator<readonly StoredEntryLine[]> {
    return schemaOneThenSegments(
      "readEntryLines",
      runId,
      fromSeq,
      pageSize,
      (from) =>
        entryPage(runId, from, pageSize)
          // Aliased to the record's names: the driver's rows are the records, with no copy per line.
          .select(["seq", "step_id as stepId", "state", "turn", "hash", "line"])
          .execute(),
      ({ seq, line }) => {
        const entry = parseStoredLine(runId, seq, line);
        return { seq, stepId: entry.step_id, state: entry.state, turn: entry.turn, hash: entry.hash, line };
      },
    );
  }

  function pagedEntryLineTexts(
    runId: string,
    fromSeq: number,
    pageSize: number,
  ): AsyncGenerator<readonly StoredEntryLineText[]> {
    return schemaOneThenSegments(
      "readEntryLineTexts",
      runId,
      fromSeq,
      pageSize,
      (from) => entryPage(runId, from, pageSize).select(["seq", "line"]).execute(),
      (line) => line,
    );
  }

  return {
    readEntryLines: (runId, range = {}) => pagedEntryLines(runId, range.fromSeq ?? 0, pageSizeOf(range)),
    readEntryLineTexts: (runId, range = {}) =>
      pagedEntryLineTexts(runId, range.fromSeq ?? 0, pageSizeOf(range)),

    async *readEntries(runId, range = {}) {
      // Parsed once: the entry's columns are not needed on the way.
      for await (const page of pagedEntryLineTexts(runId, range.fromSeq ?? 0, defaultPageSize)) {
        for (const stored of page) yield JSON.parse(stored.line) as TranscriptEntry;
      }
    },

    readRaw: async (runId, hash) => {
      const stored = await guard("readRaw", { runId, hash }, async () => {
        const row = await database
          .selectFrom("charter_run_raw_payloads as link")
          .innerJoin("charter_raw_payloads as raw", "raw.hash", "link.hash")
          .select("raw.json")
          .where("link.run_id", "=", runId)
          .where("link.hash", "=", hash)
          .executeTakeFirst();
        return row?.json ?? null;
      });
      return stored ?? segments.readRaw(runId, hash);
    },

    async *readRunRawPayloads(runId, paging = {}): AsyncGenerator<readonly StoredRawPayload[]> {
      const pageSize = pageSizeOf(paging);
      // A run stored before schema 2 and resumed since may have stored a payload in both places.
      const seen = new Set<string>();
      let after = "";
      for (;;) {
        const rows = await guard("readRunRawPayloads", { runId }, () =>
          database
            .selectFrom("charter_run_raw_payloads as link")
            .innerJoin("charter_raw_payloads as raw", "raw.hash", "link.hash")
            .select(["raw.hash", "raw.json"])
            .where("link.run_id", "=", runId)
            .where("link.hash", ">", after)
            .orderBy("link.hash")
            .limit(pageSize)
            .execute(),
        );
        for (const row of rows) seen.add(row.hash);
        if (rows.length > 0) yield rows;
        if (rows.length < pageSize) break;
        after = rows[rows.length - 1]?.hash ?? after;
      }
      yield* segments.rawPayloadPages("readRunRawPayloads", runId, pageSize, seen);
    },

    latestCheckpoint: async (runId) =>
      (await segments.checkpoint(runId, null, "latestCheckpoint")) ??
      guard("latestCheckpoint", { runId }, async () => {
        const row = await database
          .selectFrom("charter_checkpoints")
          .selectAll()
          .where("run_id", "=", runId)
          .orderBy("seq", "desc")
          .limit(1)
          .executeTakeFirst();
        return row === undefined ? null : toCheckpointRecord(row);
      }),

    readCheckpoint: async (runId, seq) =>
      (await segments.checkpoint(runId, seq, "readCheckpoint")) ??
      guard("readCheckpoint", { runId, seq }, async () => {
        const row = await database
          .selectFrom("charter_checkpoints")
          .selectAll()
          .where("run_id", "=", runId)
          .where("seq", "=", seq)
          .executeTakeFirst();
        return row === undefined ? null : toCheckpointRecord(row);
      }),

    readAccounting: (runId) =>
      guard("readAccounting", { runId }, async () => {
        const rows = await database
          .selectFrom("charter_accounting_entries")
          .select("entry_json")
          .where("run_id", "=", runId)
          .orderBy("position")
          .execute();
        const stored = rows.map((row) => JSON.parse(row.entry_json) as AccountingEntry);
        return [...stored, ...(await segments.accounting(runId))];
      }),

    readToolResults: (runId, filter = {}) =>
      guard("readToolResults", { runId }, async () => {
        let select = database.selectFrom("charter_tool_results").selectAll().where("run_id", "=", runId);
        if (filter.requestHash !== undefined) select = select.where("request_hash", "=", filter.requestHash);
        const rows = await select.orderBy("position").execute();
        const inSegments = (await segments.toolResults(runId))
          .filter(({ input }) => filter.requestHash === undefined || input.requestHash === filter.requestHash)
          .map(({ position, input, createdAt }) => ({ ...input, runId, position, createdAt }));
        const inTables = rows.map((row) => ({
          runId: row.run_id,
          position: row.position,
          turn: row.turn,
          callId: row.call_id,
          toolName: row.tool_name,
          server: row.server,
          requestHash: row.request_hash,
          status: row.status,
          errorCode: row.error_code,
          result: JSON.parse(row.result_json) as unknown,
          createdAt: row.created_at,
        }));
        return [...inTables, ...inSegments];
      }),

    recordToolOutput: (runId, output: ToolOutputInput) =>
      guard("recordToolOutput", { runId, handle: output.handle }, async () => {
        const run = await database
          .selectFrom("charter_runs")
          .select("run_id")
          .where("run_id", "=", runId)
          .executeTakeFirst();
        if (run === undefined) throw runNotFound(runId);
        await database
          .insertInto("charter_tool_outputs")
          .values(toolOutputRow(runId, output, environment.now()))
          .execute();
      }),

    /** Every checkpoint of the run, in seq order (for an export). */
    allCheckpoints: async (runId) => {
      const rows = await guard("exportRun", { runId }, () =>
        database
          .selectFrom("charter_checkpoints")
          .selectAll()
          .where("run_id", "=", runId)
          .orderBy("seq")
          .execute(),
      );
      return [...rows.map(toCheckpointRecord), ...(await segments.allCheckpoints(runId))];
    },

    listToolOutputs: (runId) =>
      guard("listToolOutputs", { runId }, async () => {
        const rows = await database
          .selectFrom("charter_tool_outputs")
          .selectAll()
          .where("run_id", "=", runId)
          .orderBy("created_at")
          .orderBy("handle")
          .execute();
        return rows.map((row) => ({
          runId: row.run_id,
          handle: row.handle,
          toolName: row.tool_name,
          callId: row.call_id,
          bytes: row.bytes,
          lines: row.lines,
          path: row.path,
          createdAt: row.created_at,
        }));
      }),
  };
}

/** A segment's entry line, parsed for the columns schema 1 kept beside it; a damaged one is `record_corrupt`. */
function parseStoredLine(runId: string, seq: number, line: string) {
  try {
    return JSON.parse(line) as { step_id: string; state: string; turn: number; hash: string };
  } catch (error) {
    throw storeError(
      "record_corrupt",
      `run ${runId}: the stored line of entry ${seq} is not JSON`,
      { runId, seq },
      error,
    );
  }
}

function toCheckpointRecord(row: {
  run_id: string;
  seq: number;
  turn: number;
  created_at: number;
  checkpoint_json: string;
}): CheckpointRecord {
  return {
    runId: row.run_id,
    seq: row.seq,
    turn: row.turn,
    createdAt: row.created_at,
    document: JSON.parse(row.checkpoint_json) as CheckpointDocument,
  };
}
