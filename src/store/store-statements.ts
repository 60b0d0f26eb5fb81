import type { CompiledQuery, Insertable, Kysely } from "kysely";
import type { RunFinish } from "./commit-batch.js";
import { compileQueryTemplate, type QueryTemplate } from "./query-template.js";
import type { RunProgress } from "./run-progress.js";
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

type InsertSlot = { readonly row: number; readonly column: string };

/** The statements the store writes with, compiled once per shape and reused (see query-template.ts). */
export interface StoreStatements {
  /** One insert per chunk of rows, in order; every row has the first row's columns. */
  insertRows<Table extends keyof StoreDatabase>(
    table: Table,
    rows: readonly Insertable<StoreDatabase[Table]>[],
    duplicates?: Duplicates,
  ): CompiledQuery[];
  /** The run's status (locking its row where `lockRunRows`), the fence of a batch that continues a run. */
  runStatus(runId: string): CompiledQuery;
  /**
   * Brings a running run's row up to its progress (and stops it, with `finish`): returns its run_id, or no row
   * when the run is not running.
   */
  updateRunRow(change: RunRowChange): CompiledQuery;
}

/** A run row brought up to date with a run's progress, when the run stops. */
export interface RunRowChange {
  readonly runId: string;
  readonly now: number;
  readonly progress: RunProgress;
  readonly finish: RunFinish | null;
}

export function createStoreStatements(
  database: Kysely<StoreDatabase>,
  options: {
    /** Lock the run row while a batch is written (PostgreSQL); SQLite's write lock covers the database. */
    readonly lockRunRows: boolean;
  },
): StoreStatements {
  const inserts = new Map<string, QueryTemplate<InsertSlot>>();
  const updates = new Map<boolean, QueryTemplate<keyof RunRowValues>>();
  const statusTemplate = compileQueryTemplate<"runId">((slots) => {
    const select = database
      .selectFrom("charter_runs")
      .select("status")
      .where("run_id", "=", slots.slot<string>("runId"));
    return options.lockRunRows ? select.forUpdate() : select;
  });

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

    runStatus(runId) {
      return statusTemplate.instantiate(() => runId);
    },

    updateRunRow(change) {
      const finishing = change.finish !== null;
      let template = updates.get(finishing);
      if (template === undefined) {
        template = compileUpdateRunRow(database, finishing);
        updates.set(finishing, template);
      }
      const values = runRowValues(change);
      return template.instantiate((key) => values[key]);
    },
  };
}

interface RunRowValues {
  readonly runId: string;
  readonly now: number;
  readonly entryCount: number;
  readonly headHash: string;
  readonly accountingCount: number;
  readonly toolResultCount: number;
  readonly segmentCount: number;
  readonly turns: number;
  readonly tokensIn: number;
  readonly tokensOut: number;
  readonly costUsd: number;
  readonly toolsUsedJson: string;
  readonly status: string | undefined;
  readonly outcome: string | null | undefined;
  readonly errorCode: string | null;
  readonly statusReason: string | null;
  readonly finalReportJson: string | null;
  readonly finishedAt: number;
}

function runRowValues(change: RunRowChange): RunRowValues {
  const { progress, finish } = change;
  return {
    runId: change.runId,
    now: change.now,
    entryCount: progress.entryCount,
    headHash: progress.headHash,
    accountingCount: progress.accountingCount,
    toolResultCount: progress.toolResultCount,
    segmentCount: progress.segmentCount,
    turns: progress.totals.turns,
    tokensIn: progress.totals.tokensIn,
    tokensOut: progress.totals.tokensOut,
    costUsd: progress.totals.costUsd,
    toolsUsedJson: JSON.stringify(progress.totals.toolsUsed),
    status: finish?.status,
    outcome: finish?.outcome,
    errorCode: finish?.errorCode ?? null,
    statusReason: finish?.statusReason ?? null,
    finalReportJson:
      finish === null || finish.finalReport === undefined ? null : JSON.stringify(finish.finalReport),
    finishedAt: finish?.finishedAt ?? change.now,
  };
}

function compileUpdateRunRow(
  database: Kysely<StoreDatabase>,
  finishing: boolean,
): QueryTemplate<keyof RunRowValues> {
  return compileQueryTemplate<keyof RunRowValues>((slots) => {
    const slot = <T>(key: keyof RunRowValues) => slots.slot<T>(key);
    return database
      .updateTable("charter_runs")
      .set({
        updated_at: slot<number>("now"),
        entry_count: slot<number>("entryCount"),
        head_hash: slot<string>("headHash"),
        accounting_count: slot<number>("accountingCount"),
        tool_result_count: slot<number>("toolResultCount"),
        segment_count: slot<number>("segmentCount"),
        turns: slot<number>("turns"),
        tokens_in: slot<number>("tokensIn"),
        tokens_out: slot<number>("tokensOut"),
        cost_usd: slot<number>("costUsd"),
        tools_used_json: slot<string>("toolsUsedJson"),
        ...(finishing
          ? {
              status: slot<string>("status"),
              outcome: slot<string | null>("outcome"),
              error_code: slot<string | null>("errorCode"),
              status_reason: slot<string | null>("statusReason"),
              final_report_json: slot<string | null>("finalReportJson"),
              finished_at: slot<number>("finishedAt"),
            }
          : {}),
      })
      .where("run_id", "=", slot<string>("runId"))
      .where("status", "=", "running")
      .returning("run_id");
  });
}
