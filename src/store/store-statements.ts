import type { CompiledQuery, Insertable, Kysely } from "kysely";
import type { RunFinish } from "./commit-batch.js";
import { compileQueryTemplate, type QueryTemplate } from "./query-template.js";
import type { RunTotals } from "./run-record.js";
import type { StoreDatabase } from "./store-database.js";

/**
 * Most bound parameters one statement takes: under SQLite's default limit (32766) and PostgreSQL's (65535),
 * so that a large import is split into several inserts while a COMMIT's few rows go in one.
 */
const parametersPerStatement = 30_000;
/** Inserts of up to this many rows are cached as templates: a COMMIT's; an import's large ones are not. */
const templateRowLimit = 32;
const templateCacheSize = 256;

/** Primary keys, for inserts that keep the row already stored (content-addressed payloads and their links). */
const conflictColumns = {
  charter_raw_payloads: ["hash"],
  charter_run_raw_payloads: ["run_id", "hash"],
} as const;

export type Duplicates = "fail" | "ignore-duplicates";

/** How one batch changes its run's row (see commitBatchProgram). */
export interface RunChange {
  readonly runId: string;
  readonly now: number;
  /** The batch's entries: the stored chain must end where they start, and then ends where they end. */
  readonly entries: {
    readonly firstSeq: number;
    readonly prevHash: string;
    readonly entryCount: number;
    readonly headHash: string;
  } | null;
  readonly accountingAdded: number;
  readonly toolResultsAdded: number;
  /** Whether the batch stores a segment (anything but tool outputs). */
  readonly segmentAdded: boolean;
  readonly totals: RunTotals | null;
  readonly finish: RunFinish | null;
}

type InsertSlot = { readonly row: number; readonly column: string };

/** The statements the store writes with, compiled once per shape and reused (see query-template.ts). */
export interface StoreStatements {
  /** One insert per chunk of rows, in order; every row has the first row's columns. */
  insertRows<Table extends keyof StoreDatabase>(
    table: Table,
    rows: readonly Insertable<StoreDatabase[Table]>[],
    duplicates?: Duplicates,
  ): CompiledQuery[];
  /** The fencing update of a batch, returning the run's new counters (no row when the fence holds it back). */
  updateRun(change: RunChange): CompiledQuery;
}

export function createStoreStatements(database: Kysely<StoreDatabase>): StoreStatements {
  const inserts = new Map<string, QueryTemplate<InsertSlot>>();
  const updates = new Map<number, QueryTemplate<keyof RunChangeValues>>();

  function insertQuery(
    table: keyof StoreDatabase,
    rows: readonly Record<string, unknown>[],
    duplicates: Duplicates,
  ): CompiledQuery {
    const build = (values: readonly Record<string, unknown>[]) => {
      const insert = database.insertInto(table).values(values as never);
      const keys =
        duplicates === "ignore-duplicates" ? conflictColumns[table as keyof typeof conflictColumns] : null;
      return keys === null || keys === undefined
        ? insert
        : insert.onConflict((conflict) => conflict.columns([...keys] as never).doNothing());
    };
    if (rows.length > templateRowLimit) return build(rows).compile();
    const columns = Object.keys(rows[0] as object);
    const key = `${table}|${rows.length}|${duplicates}|${columns.join(",")}`;
    let template = inserts.get(key);
    if (template === undefined) {
      if (inserts.size >= templateCacheSize) inserts.clear();
      template = compileQueryTemplate<InsertSlot>((slots) =>
        build(
          rows.map((_, row) => {
            const slotted: Record<string, unknown> = {};
            for (const column of columns) slotted[column] = slots.slot({ row, column });
            return slotted;
          }),
        ),
      );
      inserts.set(key, template);
    }
    return template.instantiate((slot) => (rows[slot.row] as Record<string, unknown>)[slot.column]);
  }

  return {
    insertRows(table, rows, duplicates = "fail") {
      if (rows.length === 0) return [];
      const columns = Object.keys(rows[0] as object).length;
      const size = Math.max(1, Math.floor(parametersPerStatement / columns));
      const queries: CompiledQuery[] = [];
      for (let start = 0; start < rows.length; start += size) {
        queries.push(
          insertQuery(table, rows.slice(start, start + size) as Record<string, unknown>[], duplicates),
        );
      }
      return queries;
    },

    updateRun(change) {
      const shape =
        (change.entries !== null ? 1 : 0) |
        (change.accountingAdded > 0 ? 2 : 0) |
        (change.toolResultsAdded > 0 ? 4 : 0) |
        (change.totals !== null ? 8 : 0) |
        (change.finish !== null ? 16 : 0) |
        (change.segmentAdded ? 32 : 0);
      let template = updates.get(shape);
      if (template === undefined) {
        template = compileUpdateRun(database, shape);
        updates.set(shape, template);
      }
      const values = runChangeValues(change);
      return template.instantiate((key) => values[key]);
    },
  };
}

interface RunChangeValues {
  readonly runId: string;
  readonly now: number;
  readonly firstSeq: number | undefined;
  readonly prevHash: string | undefined;
  readonly entryCount: number | undefined;
  readonly headHash: string | undefined;
  readonly accountingAdded: number;
  readonly toolResultsAdded: number;
  readonly turns: number | undefined;
  readonly tokensIn: number | undefined;
  readonly tokensOut: number | undefined;
  readonly costUsd: number | undefined;
  readonly toolsUsedJson: string | undefined;
  readonly status: string | undefined;
  readonly outcome: string | null | undefined;
  readonly errorCode: string | null;
  readonly statusReason: string | null;
  readonly finalReportJson: string | null;
  readonly finishedAt: number;
}

function runChangeValues(change: RunChange): RunChangeValues {
  const { entries, totals, finish } = change;
  return {
    runId: change.runId,
    now: change.now,
    firstSeq: entries?.firstSeq,
    prevHash: entries?.prevHash,
    entryCount: entries?.entryCount,
    headHash: entries?.headHash,
    accountingAdded: change.accountingAdded,
    toolResultsAdded: change.toolResultsAdded,
    turns: totals?.turns,
    tokensIn: totals?.tokensIn,
    tokensOut: totals?.tokensOut,
    costUsd: totals?.costUsd,
    toolsUsedJson: totals === null ? undefined : JSON.stringify(totals.toolsUsed),
    status: finish?.status,
    outcome: finish?.outcome,
    errorCode: finish?.errorCode ?? null,
    statusReason: finish?.statusReason ?? null,
    finalReportJson:
      finish === null || finish.finalReport === undefined ? null : JSON.stringify(finish.finalReport),
    finishedAt: finish?.finishedAt ?? change.now,
  };
}

function compileUpdateRun(
  database: Kysely<StoreDatabase>,
  shape: number,
): QueryTemplate<keyof RunChangeValues> {
  return compileQueryTemplate<keyof RunChangeValues>((slots) => {
    const slot = <T>(key: keyof RunChangeValues) => slots.slot<T>(key);
    let update = database
      .updateTable("charter_runs")
      .set((expression) => ({
        updated_at: slot<number>("now"),
        ...(shape & 1
          ? { entry_count: slot<number>("entryCount"), head_hash: slot<string>("headHash") }
          : {}),
        ...(shape & 2
          ? { accounting_count: expression("accounting_count", "+", slot<number>("accountingAdded")) }
          : {}),
        ...(shape & 4
          ? { tool_result_count: expression("tool_result_count", "+", slot<number>("toolResultsAdded")) }
          : {}),
        ...(shape & 32 ? { segment_count: expression("segment_count", "+", 1) } : {}),
        ...(shape & 8
          ? {
              turns: slot<number>("turns"),
              tokens_in: slot<number>("tokensIn"),
              tokens_out: slot<number>("tokensOut"),
              cost_usd: slot<number>("costUsd"),
              tools_used_json: slot<string>("toolsUsedJson"),
            }
          : {}),
        ...(shape & 16
          ? {
              status: slot<string>("status"),
              outcome: slot<string | null>("outcome"),
              error_code: slot<string | null>("errorCode"),
              status_reason: slot<string | null>("statusReason"),
              final_report_json: slot<string | null>("finalReportJson"),
              finished_at: slot<number>("finishedAt"),
            }
          : {}),
      }))
      .where("run_id", "=", slot<string>("runId"))
      .where("status", "=", "running");
    if (shape & 1) {
      update = update
        .where("entry_count", "=", slot<number>("firstSeq"))
        .where("head_hash", "=", slot<string>("prevHash"));
    }
    return update.returning([
      "entry_count",
      "head_hash",
      "accounting_count",
      "tool_result_count",
      "segment_count",
    ]);
  });
}
