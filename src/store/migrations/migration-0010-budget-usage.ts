import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * What each tenant's runs consumed per UTC day, for the server's token and cost budgets: one row per tenant and day
 * (`day_start`, milliseconds at 00:00 UTC), holding the tokens (input and output) and the cost in US dollars of the
 * model calls made that day. A model call adds to its day's row with one atomic upsert (`INSERT ... ON CONFLICT DO
 * UPDATE SET tokens = tokens + ...`), so every server process and worker on one PostgreSQL store counts into the
 * same row; a month's usage is the sum of its days. `tenant_id` is `''` for runs of no tenant.
 */
export const migration0010BudgetUsage: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("charter_budget_usage")
      .addColumn("tenant_id", "text", (column) => column.notNull())
      .addColumn("day_start", "bigint", (column) => column.notNull())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("tokens", "bigint", (column) => column.notNull())
      .addColumn("cost_usd", "double precision", (column) => column.notNull())
      .addPrimaryKeyConstraint("charter_budget_usage_primary", ["tenant_id", "day_start"])
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable("charter_budget_usage").execute();
  },
};
