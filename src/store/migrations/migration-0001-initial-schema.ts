import { type CreateTableBuilder, type Kysely, SqliteAdapter, sql } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * The first schema of the run store. Column types are the ones both SQLite and PostgreSQL understand
 * (`text`, `integer`, `bigint`, `double precision`); JSON is stored as text so that it comes back byte for
 * byte. Timestamps are `bigint` milliseconds since the epoch.
 */
export const migration0001InitialSchema: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const clustered = clusterByPrimaryKey(db);
    await db.schema
      .createTable("charter_runs")
      .addColumn("run_id", "text", (column) => column.primaryKey())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("contract_id", "text", (column) => column.notNull())
      .addColumn("contract_hash", "text", (column) => column.notNull())
      .addColumn("agent_id", "text", (column) => column.notNull())
      .addColumn("status", "text", (column) => column.notNull())
      .addColumn("status_reason", "text")
      .addColumn("outcome", "text")
      .addColumn("error_code", "text")
      .addColumn("created_at", "bigint", (column) => column.notNull())
      .addColumn("updated_at", "bigint", (column) => column.notNull())
      .addColumn("finished_at", "bigint")
      .addColumn("tenant_id", "text")
      .addColumn("correlation_id", "text")
      .addColumn("parent_run_id", "text")
      .addColumn("turns", "integer", (column) => column.notNull())
      .addColumn("tokens_in", "bigint", (column) => column.notNull())
      .addColumn("tokens_out", "bigint", (column) => column.notNull())
      .addColumn("cost_usd", "double precision", (column) => column.notNull())
      .addColumn("tools_used_json", "text", (column) => column.notNull())
      .addColumn("final_report_json", "text")
      .addColumn("head_hash", "text", (column) => column.notNull())
      .addColumn("entry_count", "integer", (column) => column.notNull())
      .addColumn("accounting_count", "integer", (column) => column.notNull())
      .addColumn("tool_result_count", "integer", (column) => column.notNull())
      .execute();
    await db.schema
      .createIndex("charter_runs_created")
      .on("charter_runs")
      .columns(["created_at", "run_id"])
      .execute();
    await db.schema
      .createIndex("charter_runs_tenant_created")
      .on("charter_runs")
      .columns(["tenant_id", "created_at"])
      .execute();
    await db.schema
      .createIndex("charter_runs_status_created")
      .on("charter_runs")
      .columns(["status", "created_at"])
      .execute();

    // Apart from the run row, which every COMMIT updates: SQLite rewrites a whole row on update, overflow pages
    // and all, and a contract with its tool manifest spans several pages.
    await db.schema
      .createTable("charter_run_contracts")
      .addColumn("run_id", "text", (column) => column.primaryKey())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("contract_json", "text", (column) => column.notNull())
      .addColumn("header_json", "text", (column) => column.notNull())
      .execute();

    await db.schema
      .createTable("charter_transcript_entries")
      .addColumn("run_id", "text", (column) => column.notNull())
      .addColumn("seq", "integer", (column) => column.notNull())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("step_id", "text", (column) => column.notNull())
      .addColumn("state", "text", (column) => column.notNull())
      .addColumn("turn", "integer", (column) => column.notNull())
      .addColumn("timestamp", "bigint", (column) => column.notNull())
      .addColumn("hash", "text", (column) => column.notNull())
      .addColumn("line", "text", (column) => column.notNull())
      .addPrimaryKeyConstraint("charter_transcript_entries_pk", ["run_id", "seq"])
      .execute();

    await db.schema
      .createTable("charter_raw_payloads")
      .addColumn("hash", "text", (column) => column.primaryKey())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("json", "text", (column) => column.notNull())
      .addColumn("bytes", "integer", (column) => column.notNull())
      .addColumn("created_at", "bigint", (column) => column.notNull())
      .execute();
    await db.schema
      .createTable("charter_run_raw_payloads")
      .addColumn("run_id", "text", (column) => column.notNull())
      .addColumn("hash", "text", (column) => column.notNull())
      .$call(clustered)
      .addPrimaryKeyConstraint("charter_run_raw_payloads_pk", ["run_id", "hash"])
      .execute();

    await db.schema
      .createTable("charter_checkpoints")
      .addColumn("run_id", "text", (column) => column.notNull())
      .addColumn("seq", "integer", (column) => column.notNull())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("turn", "integer", (column) => column.notNull())
      .addColumn("created_at", "bigint", (column) => column.notNull())
      .addColumn("checkpoint_json", "text", (column) => column.notNull())
      .addPrimaryKeyConstraint("charter_checkpoints_pk", ["run_id", "seq"])
      .execute();

    await db.schema
      .createTable("charter_accounting_entries")
      .addColumn("run_id", "text", (column) => column.notNull())
      .addColumn("position", "integer", (column) => column.notNull())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("type", "text", (column) => column.notNull())
      .addColumn("turn", "integer", (column) => column.notNull())
      .addColumn("timestamp", "bigint", (column) => column.notNull())
      .addColumn("entry_json", "text", (column) => column.notNull())
      .$call(clustered)
      .addPrimaryKeyConstraint("charter_accounting_entries_pk", ["run_id", "position"])
      .execute();

    await db.schema
      .createTable("charter_tool_results")
      .addColumn("run_id", "text", (column) => column.notNull())
      .addColumn("position", "integer", (column) => column.notNull())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("turn", "integer", (column) => column.notNull())
      .addColumn("call_id", "text", (column) => column.notNull())
      .addColumn("tool_name", "text", (column) => column.notNull())
      .addColumn("server", "text")
      .addColumn("request_hash", "text", (column) => column.notNull())
      .addColumn("status", "text", (column) => column.notNull())
      .addColumn("error_code", "text")
      .addColumn("created_at", "bigint", (column) => column.notNull())
      .addColumn("result_json", "text", (column) => column.notNull())
      .addPrimaryKeyConstraint("charter_tool_results_pk", ["run_id", "position"])
      .execute();

    await db.schema
      .createTable("charter_tool_outputs")
      .addColumn("run_id", "text", (column) => column.notNull())
      .addColumn("handle", "text", (column) => column.notNull())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("tool_name", "text", (column) => column.notNull())
      .addColumn("call_id", "text", (column) => column.notNull())
      .addColumn("bytes", "bigint", (column) => column.notNull())
      .addColumn("lines", "bigint", (column) => column.notNull())
      .addColumn("path", "text", (column) => column.notNull())
      .addColumn("created_at", "bigint", (column) => column.notNull())
      .$call(clustered)
      .addPrimaryKeyConstraint("charter_tool_outputs_pk", ["run_id", "handle"])
      .execute();

    await db.schema
      .createTable("charter_tool_cache")
      .addColumn("cache_key", "text", (column) => column.primaryKey())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("server", "text")
      .addColumn("tool", "text", (column) => column.notNull())
      .addColumn("value_json", "text", (column) => column.notNull())
      .addColumn("created_at", "bigint", (column) => column.notNull())
      .addColumn("expires_at", "bigint", (column) => column.notNull())
      .execute();
    await db.schema
      .createIndex("charter_tool_cache_expires")
      .on("charter_tool_cache")
      .column("expires_at")
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    for (const table of [
      "charter_run_contracts",
      "charter_tool_cache",
      "charter_tool_outputs",
      "charter_tool_results",
      "charter_accounting_entries",
      "charter_checkpoints",
      "charter_run_raw_payloads",
      "charter_raw_payloads",
      "charter_transcript_entries",
      "charter_runs",
    ]) {
      await db.schema.dropTable(table).ifExists().execute();
    }
  },
};

/**
 * On SQLite, a table keyed by a composite primary key is stored as a B-tree of its rows plus a separate index
 * on the key, so every insert writes two B-trees; `WITHOUT ROWID` stores the rows in key order in one, which
 * halves the pages a COMMIT writes. PostgreSQL has no such clause and needs none.
 */
function clusterByPrimaryKey(db: Kysely<unknown>) {
  const isSqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  return <Table extends string, Columns extends string>(
    builder: CreateTableBuilder<Table, Columns>,
  ): CreateTableBuilder<Table, Columns> => (isSqlite ? builder.modifyEnd(sql`without rowid`) : builder);
}
