import type { CompiledQuery, Insertable, Kysely, Updateable } from "kysely";
import type { RunFinish } from "./commit-batch.js";
import { compileQueryTemplate, type QueryTemplate } from "./query-template.js";
import {
  newestSegmentProgressQuery,
  type ProgressReads,
  type RunProgress,
  type RunRowProgress,
  runProgressRowQuery,
  runRowProgress,
  runRowProgressColumns,
} from "./run-progress.js";
import type { RunsTable, StoreDatabase } from "./store-database.js";

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
export interface StoreStatements extends ProgressReads {
  /** One insert per chunk of rows, in order; every row has the first row's columns. */
  insertRows<Table extends keyof StoreDatabase>(
    table: Table,
    rows: readonly Insertable<StoreDatabase[Table]>[],
    duplicates?: Duplicates,
  ): CompiledQuery[];
  /** Stops a running run, its row brought up to its progress: returns its run_id, or no row when not running. */
  finishRunRow(change: RunRowFinish): CompiledQuery;
}

/** A run row brought up to date with a run's progress as the run stops. */
export interface RunRowFinish {
  readonly runId: string;
  readonly progress: RunProgress;
  readonly finish: RunFinish;
}

export function createStoreStatements(
  database: Kysely<StoreDatabase>,
  options: {
    /** Lock the run row while a batch is written (PostgreSQL); SQLite's write lock covers the database. */
    readonly lockRunRows: boolean;
  },
): StoreStatements {
  const inserts = new Map<string, QueryTemplate<InsertSlot>>();
  let finishTemplate: QueryTemplate<keyof FinishRowValues> | null = null;
  const progressRowTemplate = compileQueryTemplate<"runId">((slots) =>
    runProgressRowQuery(database, slots.slot<string>("runId"), options.lockRunRows),
  );
  const newestSegmentTemplate = compileQueryTemplate<"runId" | "fromPosition">((slots) =>
    newestSegmentProgressQuery(database, slots.slot<string>("runId"), slots.slot<number>("fromPosition")),
  );

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

    runProgressRow(runId) {
      return progressRowTemplate.instantiate(() => runId);
    },

    newestSegmentProgress(runId, fromPosition) {
      return newestSegmentTemplate.instantiate((key) => (key === "runId" ? runId : fromPosition));
    },

    finishRunRow(change) {
      finishTemplate ??= compileFinishRunRow(database);
      const values = finishRowValues(change);
      return finishTemplate.instantiate((key) => values[key]);
    },
  };
}

/** The finishing update's values, by the column each sets (and `run_id`, the row it updates). */
interface FinishRowValues extends RunRowProgress {
  readonly run_id: string;
  readonly status: string;
  readonly outcome: string | null;
  readonly error_code: string | null;
  readonly status_reason: string | null;
  readonly final_report_json: string | null;
  readonly finished_at: number;
}

function finishRowValues({ runId, progress, finish }: RunRowFinish): FinishRowValues {
  return {
    ...runRowProgress(progress),
    run_id: runId,
    status: finish.status,
    outcome: finish.outcome,
    error_code: finish.errorCode ?? null,
    status_reason: finish.statusReason ?? null,
    final_report_json: finish.finalReport === undefined ? null : JSON.stringify(finish.finalReport),
    // The progress's time is the finishing batch's.
    finished_at: finish.finishedAt ?? progress.updatedAt,
  };
}

const finishColumns = [
  ...runRowProgressColumns,
  "status",
  "outcome",
  "error_code",
  "status_reason",
  "final_report_json",
  "finished_at",
] as const satisfies readonly (keyof FinishRowValues)[];

function compileFinishRunRow(database: Kysely<StoreDatabase>): QueryTemplate<keyof FinishRowValues> {
  return compileQueryTemplate<keyof FinishRowValues>((slots) => {
    const set: Record<string, unknown> = {};
    for (const column of finishColumns) set[column] = slots.slot(column);
    return database
      .updateTable("charter_runs")
      .set(set as Updateable<RunsTable>)
      .where("run_id", "=", slots.slot<string>("run_id"))
      .where("status", "=", "running")
      .returning("run_id");
  });
}
