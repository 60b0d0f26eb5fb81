import type { CompiledQuery, Kysely } from "kysely";
import type { RunTotals } from "./run-record.js";
import type { RunSummaryRow } from "./run-row.js";
import type { StatementProgram } from "./statement-program.js";
import type { StoreDatabase } from "./store-database.js";

/**
 * Where a run stands: what its next batch continues (the chain's length and head, the positions of its next
 * accounting entry, tool result and segment) and its totals so far.
 *
 * Schema 3 keeps it in two places. The run row holds it as of the run's creation, its last reopening and its
 * end; a running run's segments each hold it as of their own transaction (migration 0003), so that a durable
 * turn writes its segment and no run row. The newest segment at or after the row's `segment_count` (which
 * only segments written since the row was last brought up to date can be) is therefore newer than the row.
 */
export interface RunProgress {
  readonly entryCount: number;
  readonly headHash: string;
  readonly accountingCount: number;
  readonly toolResultCount: number;
  readonly segmentCount: number;
  readonly totals: RunTotals;
  readonly updatedAt: number;
}

interface ProgressRow {
  readonly entry_count: number;
  readonly head_hash: string;
  readonly accounting_count: number;
  readonly tool_result_count: number;
  readonly segment_count: number;
  readonly turns: number;
  readonly tokens_in: number;
  readonly tokens_out: number;
  readonly cost_usd: number;
  readonly tools_used_json: string;
  readonly updated_at: number;
}

/** A segment's progress columns (NULL before schema 3). */
export interface SegmentProgressRow {
  readonly position: number;
  readonly created_at: number;
  readonly run_entry_count: number | null;
  readonly head_hash: string | null;
  readonly accounting_count: number | null;
  readonly tool_result_count: number | null;
  readonly turns: number | null;
  readonly tokens_in: number | null;
  readonly tokens_out: number | null;
  readonly cost_usd: number | null;
  readonly tools_used_json: string | null;
}

/**
 * The query for the newest segment of a run written after its row was last brought up to date, with its
 * progress. Reads the row's leading columns and the progress columns, which follow the large ones.
 */
export function newestSegmentProgressQuery(
  database: Kysely<StoreDatabase>,
  runId: string,
  fromPosition: number,
) {
  return database
    .selectFrom("charter_run_segments")
    .select([
      "position",
      "created_at",
      "run_entry_count",
      "head_hash",
      "accounting_count",
      "tool_result_count",
      "turns",
      "tokens_in",
      "tokens_out",
      "cost_usd",
      "tools_used_json",
    ])
    .where("run_id", "=", runId)
    .where("position", ">=", fromPosition)
    .where("head_hash", "is not", null)
    .orderBy("position", "desc")
    .limit(1);
}

/** The query for a run row's status and progress, locking the row when `lockRow` (PostgreSQL). */
export function runProgressRowQuery(database: Kysely<StoreDatabase>, runId: string, lockRow: boolean) {
  const select = database
    .selectFrom("charter_runs")
    .select(["status", ...runRowProgressColumns])
    .where("run_id", "=", runId);
  return lockRow ? select.forUpdate() : select;
}

/** The run's progress: the row's, or the newer segment's when there is one. */
export function runProgressOf(row: ProgressRow, newer: SegmentProgressRow | undefined): RunProgress {
  // A segment's progress columns are the row's, but for the entry and segment counts and the time.
  const from: ProgressRow =
    newer === undefined || newer.head_hash === null
      ? row
      : {
          entry_count: newer.run_entry_count as number,
          head_hash: newer.head_hash,
          accounting_count: newer.accounting_count as number,
          tool_result_count: newer.tool_result_count as number,
          segment_count: Number(newer.position) + 1,
          turns: newer.turns as number,
          tokens_in: newer.tokens_in as number,
          tokens_out: newer.tokens_out as number,
          cost_usd: newer.cost_usd as number,
          tools_used_json: newer.tools_used_json ?? "[]",
          updated_at: newer.created_at,
        };
  return {
    entryCount: Number(from.entry_count),
    headHash: from.head_hash,
    accountingCount: Number(from.accounting_count),
    toolResultCount: Number(from.tool_result_count),
    segmentCount: Number(from.segment_count),
    totals: {
      turns: Number(from.turns),
      tokensIn: Number(from.tokens_in),
      tokensOut: Number(from.tokens_out),
      costUsd: Number(from.cost_usd),
      toolsUsed: JSON.parse(from.tools_used_json) as string[],
    },
    updatedAt: Number(from.updated_at),
  };
}

/** The run row's columns that hold its progress, as `runRowProgress` fills them. */
export const runRowProgressColumns = [
  "entry_count",
  "head_hash",
  "accounting_count",
  "tool_result_count",
  "segment_count",
  "turns",
  "tokens_in",
  "tokens_out",
  "cost_usd",
  "tools_used_json",
  "updated_at",
] as const;

export type RunRowProgress = ProgressRow;

/** The run row's columns as they hold this progress: where a row is brought up to date, or read with it. */
export function runRowProgress(progress: RunProgress): RunRowProgress {
  return {
    entry_count: progress.entryCount,
    head_hash: progress.headHash,
    accounting_count: progress.accountingCount,
    tool_result_count: progress.toolResultCount,
    segment_count: progress.segmentCount,
    turns: progress.totals.turns,
    tokens_in: progress.totals.tokensIn,
    tokens_out: progress.totals.tokensOut,
    cost_usd: progress.totals.costUsd,
    tools_used_json: JSON.stringify(progress.totals.toolsUsed),
    updated_at: progress.updatedAt,
  };
}

/** The statements that read a run's progress (store-statements.ts compiles them once). */
export interface ProgressReads {
  /** The run row's status and progress columns, locked where the store locks run rows. */
  runProgressRow(runId: string): CompiledQuery;
  /** See `newestSegmentProgressQuery`. */
  newestSegmentProgress(runId: string, fromPosition: number): CompiledQuery;
}

/**
 * Reads a run's status and progress inside a transaction (locking the run row where the database can:
 * PostgreSQL, so that a concurrent writer waits for this transaction), or null when the run is not stored.
 */
export function* readRunProgress(
  reads: ProgressReads,
  runId: string,
): StatementProgram<{ readonly status: string; readonly progress: RunProgress } | null> {
  const row = (yield reads.runProgressRow(runId))[0] as
    | (ProgressRow & { readonly status: string })
    | undefined;
  if (row === undefined) return null;
  // Only a running run has segments newer than its row: stopping a run brings its row up to date.
  const newer =
    row.status === "running"
      ? ((yield reads.newestSegmentProgress(runId, Number(row.segment_count)))[0] as
          | SegmentProgressRow
          | undefined)
      : undefined;
  return { status: row.status, progress: runProgressOf(row, newer) };
}

/** The progress of a run just created: nothing stored after its row. */
export function createdRunProgress(headHash: string, createdAt: number): RunProgress {
  return {
    entryCount: 0,
    headHash,
    accountingCount: 0,
    toolResultCount: 0,
    segmentCount: 0,
    totals: { turns: 0, tokensIn: 0, tokensOut: 0, costUsd: 0, toolsUsed: [] },
    updatedAt: createdAt,
  };
}

/** The run row's columns as they read with this progress: for a running run read back from the store. */
export function withProgress<Row extends RunSummaryRow>(row: Row, progress: RunProgress): Row {
  return { ...row, ...runRowProgress(progress) };
}
