import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * The server's rate-limit counters: one row per limited subject (a client address, a tenant, a user, a user's
 * tool class...) and fixed window, holding how many requests that window has counted. Counting is one atomic
 * upsert (`INSERT ... ON CONFLICT DO UPDATE SET count = count + 1 RETURNING count`), so every server process and
 * worker on one PostgreSQL store shares the same counts. `tenant_id` is `''` for a subject of no tenant (an
 * address); rows of windows that have passed are deleted as new windows are counted.
 */
export const migration0009RateWindows: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("charter_rate_windows")
      .addColumn("tenant_id", "text", (column) => column.notNull())
      .addColumn("subject", "text", (column) => column.notNull())
      .addColumn("window_start", "bigint", (column) => column.notNull())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("count", "integer", (column) => column.notNull())
      .addPrimaryKeyConstraint("charter_rate_windows_primary", ["tenant_id", "subject", "window_start"])
      .execute();
    await db.schema
      .createIndex("charter_rate_windows_start")
      .on("charter_rate_windows")
      .columns(["window_start"])
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable("charter_rate_windows").execute();
  },
};
