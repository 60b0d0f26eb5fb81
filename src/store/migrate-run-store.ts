import type { Kysely } from "kysely";
import { type Migration, Migrator } from "kysely/migration";
import {
  migrationLockTableName,
  migrationTableName,
  runStoreMigrations,
  runStoreSchemaVersion,
} from "./migrations/run-store-migrations.js";
import type { StoreDatabase } from "./store-database.js";
import { storeError } from "./store-errors.js";

/**
 * Brings the database to this Charter's schema: applies, in order and each in its own transaction, the
 * migrations it has not applied yet (Kysely's Migrator, which locks so that two processes opening the same
 * database at once migrate it once). Returns the schema version. Throws CONFIGURATION_INVALID
 * (`schema_newer`) when the database was migrated by a newer Charter, INTERNAL_ERROR (`store_unavailable`)
 * when migrating fails. `schema` is the PostgreSQL schema the tables live in (none for SQLite).
 */
export async function migrateRunStore(
  database: Kysely<StoreDatabase>,
  options: { readonly schema?: string } = {},
): Promise<number> {
  const migrator = new Migrator({
    db: database,
    provider: { getMigrations: async (): Promise<Record<string, Migration>> => ({ ...runStoreMigrations }) },
    migrationTableName,
    migrationLockTableName,
    // Kysely looks for its tables among those of every schema unless told which one: name it, so that
    // another schema's store in the same database is not taken for this one's.
    ...(options.schema !== undefined ? { migrationTableSchema: options.schema } : {}),
  });
  const { error } = await migrator.migrateToLatest();
  if (error === undefined) return runStoreSchemaVersion;
  const unknown = await findUnknownMigrations(database);
  if (unknown.length > 0) {
    throw storeError(
      "schema_newer",
      `the database was migrated by a newer Charter (migrations ${unknown.join(", ")}); upgrade Charter to use it`,
      { unknownMigrations: unknown, schemaVersion: runStoreSchemaVersion },
      error,
    );
  }
  throw storeError("store_unavailable", "migrating the run store failed", {}, error);
}

/** Applied migrations this Charter does not know; empty when the table cannot be read. */
async function findUnknownMigrations(database: Kysely<StoreDatabase>): Promise<string[]> {
  try {
    const rows = await (database as unknown as Kysely<Record<string, { name: string }>>)
      .selectFrom(migrationTableName)
      .select("name")
      .execute();
    return rows.map((row) => row.name).filter((name) => !Object.hasOwn(runStoreMigrations, name));
  } catch {
    return [];
  }
}
