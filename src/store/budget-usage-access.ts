import { type Kysely, sql } from "kysely";
import type { RunStore } from "./run-store.js";
import type { StoreDatabase } from "./store-database.js";
import type { StoreGuard } from "./store-guard.js";
import { storeRecordVersion } from "./store-record-version.js";

export type BudgetUsageAccess = Pick<RunStore, "addBudgetUsage" | "readBudgetUsage">;

/**
 * The store's tenant's consumption per UTC day (the server's budgets): one atomic upsert per model call, so that
 * concurrent runs in every process on one PostgreSQL store see each other's usage; a period's usage is one sum.
 */
export function createBudgetUsageAccess(
  database: Kysely<StoreDatabase>,
  guard: StoreGuard,
  tenantId: string | null,
): BudgetUsageAccess {
  const tenant = tenantId ?? "";
  return {
    addBudgetUsage: ({ dayStart, tokens, costUsd }) =>
      guard("addBudgetUsage", { dayStart }, async () => {
        await database
          .insertInto("charter_budget_usage")
          .values({
            tenant_id: tenant,
            day_start: dayStart,
            v: storeRecordVersion,
            tokens,
            cost_usd: costUsd,
          })
          .onConflict((conflict) =>
            conflict.columns(["tenant_id", "day_start"]).doUpdateSet({
              tokens: sql<number>`charter_budget_usage.tokens + ${tokens}`,
              cost_usd: sql<number>`charter_budget_usage.cost_usd + ${costUsd}`,
            }),
          )
          .execute();
      }),

    readBudgetUsage: ({ from, to }) =>
      guard("readBudgetUsage", { from, to }, async () => {
        const row = await database
          .selectFrom("charter_budget_usage")
          .select([
            sql<number | string | null>`sum(tokens)`.as("tokens"),
            sql<number | string | null>`sum(cost_usd)`.as("cost_usd"),
          ])
          .where("tenant_id", "=", tenant)
          .where("day_start", ">=", from)
          .where("day_start", "<", to)
          .executeTakeFirst();
        return { tokens: Number(row?.tokens ?? 0), costUsd: Number(row?.cost_usd ?? 0) };
      }),
  };
}
