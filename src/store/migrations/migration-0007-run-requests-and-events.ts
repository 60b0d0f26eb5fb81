import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * Runs a server executes: the request each was accepted with (what a worker on another machine needs to execute
 * it, the conversation it continues, whether its cancellation was asked for) and its lifecycle events (REQUESTED,
 * ROUTED, EXECUTING, TOOL_CALL ..., COMPLETED | FAILED), numbered per run. Both scoped by tenant like runs. A request
 * is stored before its run exists (a queued run has no run row yet), so neither table refers to `charter_runs`.
 */
export const migration0007RunRequestsAndEvents: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("charter_run_requests")
      .addColumn("run_id", "text", (column) => column.primaryKey())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("tenant_id", "text")
      .addColumn("conversation_id", "text")
      .addColumn("request_json", "text", (column) => column.notNull())
      .addColumn("state", "text", (column) => column.notNull())
      .addColumn("last_sequence", "integer", (column) => column.notNull())
      .addColumn("cancel_requested_at", "bigint")
      .addColumn("created_at", "bigint", (column) => column.notNull())
      .addColumn("updated_at", "bigint", (column) => column.notNull())
      .execute();
    await db.schema
      .createIndex("charter_run_requests_conversation")
      .on("charter_run_requests")
      .columns(["tenant_id", "conversation_id", "created_at"])
      .execute();
    await db.schema
      .createIndex("charter_run_requests_state")
      .on("charter_run_requests")
      .columns(["state", "updated_at"])
      .execute();
    await db.schema
      .createTable("charter_run_events")
      .addColumn("run_id", "text", (column) => column.notNull())
      .addColumn("sequence", "integer", (column) => column.notNull())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("tenant_id", "text")
      .addColumn("type", "text", (column) => column.notNull())
      .addColumn("request_id", "text", (column) => column.notNull())
      .addColumn("user_id", "text")
      .addColumn("correlation_id", "text", (column) => column.notNull())
      .addColumn("conversation_id", "text")
      .addColumn("created_at", "bigint", (column) => column.notNull())
      .addColumn("data_json", "text", (column) => column.notNull())
      .addPrimaryKeyConstraint("charter_run_events_key", ["run_id", "sequence"])
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable("charter_run_events").execute();
    await db.schema.dropIndex("charter_run_requests_state").execute();
    await db.schema.dropIndex("charter_run_requests_conversation").execute();
    await db.schema.dropTable("charter_run_requests").execute();
  },
};
