import { mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { type CompiledQuery, Kysely, SqliteDialect, type SqliteStatement } from "kysely";
import {
  type BackgroundWalCheckpointer,
  createBackgroundWalCheckpointer,
  type WalCheckpointResult,
} from "./background-wal-checkpointer.js";
import {
  type QueryRows,
  runProgramSynchronously,
  type StatementProgram,
  type TransactionRunner,
} from "./statement-program.js";
import type { StoreDatabase } from "./store-database.js";

export interface SqliteStoreOptions {
  /**
   * `normal` (the default): in WAL mode a committed transaction survives the process being killed (kill -9),
   * and the database never corrupts; a power loss or OS crash may lose the last transactions. `full` also
   * survives those, at the cost of an fsync per COMMIT.
   */
  readonly synchronous?: "normal" | "full";
  /** How long a writer waits for another process's write lock before failing; default 5000 ms. */
  readonly busyTimeoutMilliseconds?: number;
  /**
   * WAL pages after which a commit copies the WAL back into the database (a checkpoint, with its fsyncs);
   * default 10000 (about 40 MB). SQLite's own default, 1000, checkpoints every few dozen COMMITs, which
   * costs about a third of a COMMIT's time when amortised.
   */
  readonly walAutocheckpointPages?: number;
  /**
   * Write transactions between two checkpoints run on a worker thread with its own connection (see
   * background-wal-checkpointer.ts); default 200 (about 1,400 WAL pages for durable tool turns). 0 turns it off:
   * every checkpoint is then the automatic one of the connection that commits, which waits for it.
   */
  readonly backgroundCheckpointCommits?: number;
  /** Called after each background checkpoint (how many WAL frames it found and copied). */
  readonly onBackgroundCheckpoint?: (result: WalCheckpointResult) => void;
}

/** How much of the database file reads may map into memory (address space, not memory used). */
const memoryMapBytes = 256 * 1024 * 1024;
const directoryMode = 0o700;
const fileMode = 0o600;
/** The options' defaults (docs/store.md lists them; a test holds the two together). */
export const sqliteStoreDefaults = {
  synchronous: "normal",
  busyTimeoutMilliseconds: 5000,
  walAutocheckpointPages: 10_000,
  backgroundCheckpointCommits: 200,
} as const satisfies Required<Omit<SqliteStoreOptions, "onBackgroundCheckpoint">>;
/** Prepared statements kept per database; the store issues a few dozen distinct statements. */
const statementCacheSize = 256;

/**
 * Opens (creating it if needed) a SQLite database for the run store: the directory 0700 and the file 0600,
 * since transcripts may hold private data (SQLite gives its -wal and -shm files the database file's mode),
 * in WAL mode so that readers never block the writer and a COMMIT costs no fsync under `normal`.
 *
 * Statements are prepared once and reused (Kysely would prepare each query anew), and batches run as one
 * synchronous `BEGIN IMMEDIATE` transaction: no await between their statements, the write lock taken at once.
 */
export async function openSqliteDatabase(
  path: string,
  options: SqliteStoreOptions = {},
): Promise<{ database: Kysely<StoreDatabase>; runner: TransactionRunner }> {
  if (path !== ":memory:") {
    await mkdir(dirname(path), { recursive: true, mode: directoryMode });
    // Flag "a" creates the file with this mode when missing and leaves an existing one as it is.
    await (await open(path, "a", fileMode)).close();
  }
  const { default: Database } = await import("better-sqlite3");
  const sqlite = new Database(path);
  try {
    sqlite.pragma("journal_mode = WAL");
    const synchronous = options.synchronous ?? sqliteStoreDefaults.synchronous;
    sqlite.pragma(synchronous === "full" ? "synchronous = FULL" : "synchronous = NORMAL");
    sqlite.pragma(
      `busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMilliseconds ?? sqliteStoreDefaults.busyTimeoutMilliseconds))}`,
    );
    sqlite.pragma(
      `wal_autocheckpoint = ${Math.max(1, Math.trunc(options.walAutocheckpointPages ?? sqliteStoreDefaults.walAutocheckpointPages))}`,
    );
    // After a checkpoint, the WAL file is cut back to this size instead of staying at its largest.
    sqlite.pragma("journal_size_limit = 67108864");
    // Reads through a memory map instead of a read() per page: reading a run back (verify, replay, export)
    // reads every page of it. Writes still go through the WAL. Ignored where the platform has no mmap.
    sqlite.pragma(`mmap_size = ${memoryMapBytes}`);
  } catch (error) {
    sqlite.close();
    throw error;
  }
  const backgroundCheckpointCommits = Math.trunc(
    options.backgroundCheckpointCommits ?? sqliteStoreDefaults.backgroundCheckpointCommits,
  );
  // A memory database has no WAL, and another connection would open another database.
  const checkpointer: BackgroundWalCheckpointer | null =
    path === ":memory:" || !(backgroundCheckpointCommits > 0)
      ? null
      : createBackgroundWalCheckpointer({
          path,
          commitsPerCheckpoint: backgroundCheckpointCommits,
          ...(options.onBackgroundCheckpoint !== undefined
            ? { onCheckpoint: options.onBackgroundCheckpoint }
            : {}),
        });
  const statements = new Map<string, BetterSqlite3.Statement>();
  function prepare(sql: string): BetterSqlite3.Statement {
    let statement = statements.get(sql);
    if (statement === undefined) {
      if (statements.size >= statementCacheSize) statements.clear();
      statement = sqlite.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  }
  function execute(query: CompiledQuery): QueryRows {
    const statement = prepare(query.sql);
    // An array binds positionally, as Kysely's own SQLite driver passes parameters.
    const parameters = query.parameters as unknown[];
    if (statement.reader) return statement.all(parameters) as QueryRows;
    statement.run(parameters);
    return [];
  }
  const database = new Kysely<StoreDatabase>({
    dialect: new SqliteDialect({
      database: {
        // better-sqlite3's statements are what Kysely's SqliteStatement describes (parameters as an array).
        prepare: (sql) => prepare(sql) as unknown as SqliteStatement,
        close: () => {
          statements.clear();
          sqlite.close();
        },
      },
    }),
  });
  // Made once: better-sqlite3 builds a wrapper per call of transaction().
  const inTransaction = sqlite.transaction(
    <T>(program: () => StatementProgram<T>): T => runProgramSynchronously(program(), execute),
  );
  const runner: TransactionRunner = {
    run<T>(program: () => StatementProgram<T>): Promise<T> {
      // Synchronous from BEGIN IMMEDIATE to COMMIT, so nothing can interleave with it on this connection. Kysely's
      // own transactions (which await between statements) run only while migrating, before the store exists.
      let result: T;
      try {
        result = inTransaction.immediate(program) as T;
      } catch (error) {
        return Promise.reject(error);
      }
      checkpointer?.committed();
      return Promise.resolve(result);
    },
    close: () => checkpointer?.close() ?? Promise.resolve(),
  };
  return { database, runner };
}
