import type { Kysely } from "kysely";
import { CharterError } from "../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import { createKyselyRunStore } from "./create-kysely-run-store.js";
import { migrateRunStore } from "./migrate-run-store.js";
import { openPostgresDatabase, type PostgresStoreOptions } from "./open-postgres-database.js";
import { openSqliteDatabase, type SqliteStoreOptions } from "./open-sqlite-database.js";
import type { RunStore } from "./run-store.js";
import {
  describeLocation,
  type RunStoreLocationInput,
  resolveRunStoreLocation,
} from "./run-store-location.js";
import { createKyselyTransactionRunner, type TransactionRunner } from "./statement-program.js";
import type { StoreDatabase } from "./store-database.js";
import { toStoreError } from "./store-errors.js";

export interface OpenRunStoreOptions extends RunStoreLocationInput {
  /** The clock of the store's timestamps and the cache's default `now`. */
  readonly environment: RuntimeEnvironment;
  readonly sqlite?: SqliteStoreOptions;
  readonly postgres?: PostgresStoreOptions;
  /**
   * The tenant whose runs the store reads and writes; absent or null: the default tenant (the runs stored without
   * one). Another tenant's run is, to this store, not stored.
   */
  readonly tenantId?: string | null;
}

// SQLite migrations of this process, by database path: one at a time. Kysely's migrator takes no lock on SQLite and
// runs each migration as a transaction across awaits, while better-sqlite3 waits for another connection's lock
// synchronously, so two of them meeting in one process (a work plan's parallel runs opening a new store) would block
// each other until one fails. Between processes SQLite's own locking (busy_timeout) is enough.
const sqliteMigrations = new Map<string, Promise<unknown>>();

function migrateOneAtATime<T>(path: string, migrate: () => Promise<T>): Promise<T> {
  const previous = sqliteMigrations.get(path) ?? Promise.resolve();
  const next = previous.then(migrate, migrate);
  const settled = next.then(
    () => undefined,
    () => undefined,
  );
  sqliteMigrations.set(path, settled);
  void settled.then(() => {
    if (sqliteMigrations.get(path) === settled) sqliteMigrations.delete(path);
  });
  return next;
}

/**
 * Opens the run store named by the options (see resolveRunStoreLocation: `url`, `path`,
 * `CHARTER_DATABASE_URL`, then `~/.charter/charter.db`) and migrates it to this Charter's schema.
 * Throws CONFIGURATION_INVALID for a bad location or a database migrated by a newer Charter, INTERNAL_ERROR
 * (`details.reason` `store_unavailable`) when the database cannot be opened or reached.
 */
export async function openRunStore(options: OpenRunStoreOptions): Promise<RunStore> {
  const location = resolveRunStoreLocation(options);
  const description = describeLocation(location);
  let database: Kysely<StoreDatabase> | null = null;
  try {
    let schema: string | undefined;
    let runner: TransactionRunner;
    if (location.backend === "sqlite") {
      const opened = await openSqliteDatabase(location.path, options.sqlite);
      database = opened.database;
      runner = opened.runner;
    } else {
      const opened = await openPostgresDatabase(location.url, options.postgres);
      database = opened.database;
      schema = opened.schema;
      runner = createKyselyTransactionRunner(database);
    }
    const opened = database;
    const schemaVersion =
      location.backend === "sqlite"
        ? await migrateOneAtATime(location.path, () => migrateRunStore(opened))
        : await migrateRunStore(database, schema !== undefined ? { schema } : {});
    return createKyselyRunStore({
      database,
      runner,
      backend: location.backend,
      location: description,
      schemaVersion,
      postgresSchema: schema ?? null,
      environment: options.environment,
      tenantId: options.tenantId ?? null,
    });
  } catch (error) {
    await database?.destroy().catch(() => undefined);
    const failure = toStoreError(error, "openRunStore");
    // Every failure to open names the store it was about (without a password).
    throw new CharterError(failure.code, failure.message, {
      details: { ...failure.details, backend: location.backend, location: description },
      cause: failure.cause ?? error,
    });
  }
}
