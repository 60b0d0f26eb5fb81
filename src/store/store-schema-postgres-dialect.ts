import {
  type DatabaseIntrospector,
  type DatabaseMetadataOptions,
  type Kysely,
  PostgresDialect,
  type PostgresDialectConfig,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from "kysely";

// Kysely's own migration tables, which its introspectors leave out unless asked (the store's have other names).
const kyselyMigrationTables = ["kysely_migration", "kysely_migration_lock"];

interface ColumnRow {
  readonly table_name: string;
  readonly schema_name: string;
  readonly kind: string;
  readonly column_name: string;
  readonly data_type: string;
  readonly data_type_schema: string;
  readonly is_nullable: boolean;
  readonly has_default: boolean;
  readonly is_auto_incrementing: boolean;
  readonly comment: string | null;
}

/**
 * PostgreSQL as the run store uses it: Kysely's dialect, whose introspection (what its Migrator reads to see whether
 * the migration tables exist) looks at the store's schema only. Kysely's own introspector reads every table of every
 * schema in the database, calling a function per column that fails when another client drops a schema meanwhile
 * (many stores, or tests, share one database, each in its own schema): opening a store then failed with
 * "migrating the run store failed" (schema ... does not exist), and took longer the more schemas there were.
 * `schema` is the store's; without one, the connection's current schema.
 */
export class StoreSchemaPostgresDialect extends PostgresDialect {
  readonly #schema: string | undefined;

  constructor(config: PostgresDialectConfig, schema: string | undefined) {
    super(config);
    this.#schema = schema;
  }

  override createIntrospector(database: Kysely<unknown>): DatabaseIntrospector {
    const schema = this.#schema ?? null;
    return {
      async getSchemas(): Promise<SchemaMetadata[]> {
        const { rows } = await sql<{ name: string }>`
          select nspname as name from pg_catalog.pg_namespace
          where nspname = coalesce(${schema}::text, current_schema())`.execute(database);
        return rows.map((row) => ({ name: row.name }));
      },
      async getTables(
        options: DatabaseMetadataOptions = { withInternalKyselyTables: false },
      ): Promise<TableMetadata[]> {
        const { rows } = await sql<ColumnRow>`
          select c.relname as table_name, n.nspname as schema_name, c.relkind as kind,
            a.attname as column_name, t.typname as data_type, tn.nspname as data_type_schema,
            not a.attnotnull as is_nullable, a.atthasdef as has_default,
            (a.attidentity <> '' or coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid) like 'nextval(%', false))
              as is_auto_incrementing,
            pg_catalog.col_description(a.attrelid, a.attnum) as comment
          from pg_catalog.pg_class c
          join pg_catalog.pg_namespace n on n.oid = c.relnamespace
          join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
          join pg_catalog.pg_type t on t.oid = a.atttypid
          join pg_catalog.pg_namespace tn on tn.oid = t.typnamespace
          left join pg_catalog.pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
          where n.nspname = coalesce(${schema}::text, current_schema())
            and c.relkind in ('r', 'p', 'v', 'm', 'f')
          order by c.relname, a.attnum`.execute(database);
        const tables = new Map<string, TableMetadata>();
        for (const row of rows) {
          if (!options.withInternalKyselyTables && kyselyMigrationTables.includes(row.table_name)) continue;
          let table = tables.get(row.table_name);
          if (table === undefined) {
            table = {
              name: row.table_name,
              schema: row.schema_name,
              isView: row.kind === "v" || row.kind === "m",
              isForeign: row.kind === "f",
              columns: [],
            };
            tables.set(row.table_name, table);
          }
          table.columns.push({
            name: row.column_name,
            dataType: row.data_type,
            dataTypeSchema: row.data_type_schema,
            isNullable: row.is_nullable,
            hasDefaultValue: row.has_default,
            isAutoIncrementing: row.is_auto_incrementing,
            ...(row.comment !== null ? { comment: row.comment } : {}),
          });
        }
        return [...tables.values()];
      },
    };
  }
}
