import { Kysely } from "kysely";
import { CharterError } from "../foundation/charter-error.js";
import type { StoreDatabase } from "./store-database.js";
import { StoreSchemaPostgresDialect } from "./store-schema-postgres-dialect.js";

export interface PostgresStoreOptions {
  /**
   * The schema the store's tables live in (created if missing); default the connection's search path
   * (usually `public`). Lets several Charter installations, or tests, share one database.
   */
  readonly schema?: string;
  /** Connections in the pool; default 4. */
  readonly poolSize?: number;
}

const schemaPattern = /^[a-z_][a-z0-9_]{0,62}$/;
const int8TypeId = 20;

/**
 * Opens a connection pool for the run store. `bigint` columns (timestamps, counts) are read as numbers,
 * not as the strings node-postgres returns by default: they hold milliseconds and sizes, far below 2^53.
 */
export async function openPostgresDatabase(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<{ database: Kysely<StoreDatabase>; schema: string }> {
  const schema = options.schema;
  if (schema !== undefined && !schemaPattern.test(schema)) {
    throw new CharterError(
      "CONFIGURATION_INVALID",
      "the run store's PostgreSQL schema must be a lowercase SQL identifier",
      { details: { schema } },
    );
  }
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 4,
    types: {
      getTypeParser: ((typeId: number, format?: "text" | "binary") =>
        typeId === int8TypeId
          ? Number
          : pg.types.getTypeParser(typeId, format)) as typeof pg.types.getTypeParser,
    },
    ...(schema !== undefined ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle connection dropped by the server must not crash the process; the next query reports the failure.
  pool.on("error", () => undefined);
  const database = new Kysely<StoreDatabase>({ dialect: new StoreSchemaPostgresDialect({ pool }, schema) });
  try {
    if (schema !== undefined) {
      await database.schema.createSchema(schema).ifNotExists().execute();
      return { database, schema };
    }
    // Without a configured schema, the tables go where the connection's search path puts them.
    const current = await database
      .selectNoFrom((expression) => expression.fn<string>("current_schema", []).as("schema"))
      .executeTakeFirstOrThrow();
    return { database, schema: current.schema };
  } catch (error) {
    await database.destroy();
    throw error;
  }
}
