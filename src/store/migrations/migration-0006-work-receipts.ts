import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * Work item receipts (`charter work`): each receipt's canonical document with the columns it is found by. Scoped by
 * tenant like runs; a receipt lives beside its run, not in it (a recovered item's receipt has no stored run).
 */
export const migration0006WorkReceipts: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("charter_work_receipts")
      .addColumn("receipt_id", "text", (column) => column.primaryKey())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("tenant_id", "text")
      .addColumn("run_id", "text", (column) => column.notNull())
      .addColumn("work_item_id", "text", (column) => column.notNull())
      .addColumn("repository", "text", (column) => column.notNull())
      .addColumn("status", "text", (column) => column.notNull())
      .addColumn("receipt_hash", "text", (column) => column.notNull())
      .addColumn("receipt_json", "text", (column) => column.notNull())
      .addColumn("created_at", "bigint", (column) => column.notNull())
      .execute();
    await db.schema
      .createIndex("charter_work_receipts_tenant_repository")
      .on("charter_work_receipts")
      .columns(["tenant_id", "repository", "created_at"])
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex("charter_work_receipts_tenant_repository").execute();
    await db.schema.dropTable("charter_work_receipts").execute();
  },
};
