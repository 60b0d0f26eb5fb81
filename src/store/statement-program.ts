import type { CompiledQuery, Kysely } from "kysely";
import type { StoreDatabase } from "./store-database.js";

/** The rows a statement returned (none for a write without RETURNING). */
export type QueryRows = readonly Record<string, unknown>[];

/**
 * Statements that depend on each other's results (a RETURNING read before the next insert), written once
 * for both backends: the program yields each compiled statement and receives its rows. A runner executes it
 * in one transaction, synchronously on SQLite and over the network on PostgreSQL.
 */
export type StatementProgram<T> = Generator<CompiledQuery, T, QueryRows>;

export interface TransactionRunner {
  /** Runs the program in one transaction: all its statements take effect, or none does. */
  run<T>(program: () => StatementProgram<T>): Promise<T>;
  /** Stops what the runner runs beside the database (SQLite's background checkpointer), before it is closed. */
  close?(): Promise<void>;
}

/** Runs programs in Kysely transactions (PostgreSQL: one pooled connection per transaction). */
export function createKyselyTransactionRunner(database: Kysely<StoreDatabase>): TransactionRunner {
  return {
    run: (program) =>
      database.transaction().execute(async (transaction) => {
        const statements = program();
        let rows: QueryRows = [];
        for (;;) {
          const step = statements.next(rows);
          if (step.done === true) return step.value;
          rows = (await transaction.executeQuery<Record<string, unknown>>(step.value)).rows;
        }
      }),
  };
}

/** Runs a program to its end with a synchronous executor. */
export function runProgramSynchronously<T>(
  statements: StatementProgram<T>,
  execute: (query: CompiledQuery) => QueryRows,
): T {
  let rows: QueryRows = [];
  for (;;) {
    const step = statements.next(rows);
    if (step.done === true) return step.value;
    rows = execute(step.value);
  }
}
