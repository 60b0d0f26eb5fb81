import { type Kysely, sql } from "kysely";
import type { RunStore } from "./run-store.js";
import type { StoreDatabase } from "./store-database.js";
import type { StoreGuard } from "./store-guard.js";
import { storeRecordVersion } from "./store-record-version.js";

export type RateWindowAccess = Pick<RunStore, "countInRateWindow">;

/**
 * Rate-limit counters in the store: one atomic upsert per counted request, so that processes sharing a PostgreSQL
 * store share their counts (the database, not a process, orders concurrent increments).
 */
export function createRateWindowAccess(
  database: Kysely<StoreDatabase>,
  guard: StoreGuard,
  tenantId: string | null,
): RateWindowAccess {
  return {
    countInRateWindow: ({ subject, windowStart, expiredBefore }) =>
      guard("countInRateWindow", { subject }, async () => {
        const tenant = tenantId ?? "";
        const row = await database
          .insertInto("charter_rate_windows")
          .values({
            tenant_id: tenant,
            subject,
            window_start: windowStart,
            v: storeRecordVersion,
            count: 1,
          })
          .onConflict((conflict) =>
            conflict
              .columns(["tenant_id", "subject", "window_start"])
              .doUpdateSet({ count: sql<number>`charter_rate_windows.count + 1` }),
          )
          .returning("count")
          .executeTakeFirstOrThrow();
        const count = Number(row.count);
        // Upkeep once per new window of a subject (not per request): the tenant's expired windows of every subject
        // go, so that subjects never seen again (a one-off client address, a user who left) leave no rows behind.
        if (count === 1) {
          await database
            .deleteFrom("charter_rate_windows")
            .where("tenant_id", "=", tenant)
            .where("window_start", "<", expiredBefore)
            .execute();
        }
        return count;
      }),
  };
}
