import type { Kysely } from "kysely";
import { runEventFromRow } from "./run-event-from-row.js";
import type { RunStore } from "./run-store.js";
import type { StoreDatabase } from "./store-database.js";
import type { StoreGuard } from "./store-guard.js";

export type RunEventRangeAccess = Pick<RunStore, "listRunEventsInRange">;

const maximumPage = 5000;

/**
 * The store's tenant's lifecycle events of some types stored within a time range, across runs, in (time, run,
 * sequence) order, a page at a time: what statistics are computed from.
 */
export function createRunEventRangeAccess(
  database: Kysely<StoreDatabase>,
  guard: StoreGuard,
  tenantId: string | null,
): RunEventRangeAccess {
  const tenantFilter = tenantId === null ? ("is" as const) : ("=" as const);
  return {
    listRunEventsInRange: (query) =>
      guard("listRunEventsInRange", {}, async () => {
        if (query.types.length === 0) return [];
        const limit = Math.min(Math.max(Math.trunc(query.limit ?? maximumPage), 1), maximumPage);
        let select = database
          .selectFrom("charter_run_events")
          .selectAll()
          .where("tenant_id", tenantFilter, tenantId)
          .where("type", "in", [...query.types])
          .where("created_at", ">=", query.from)
          .where("created_at", "<", query.to);
        const after = query.after;
        if (after !== undefined) {
          select = select.where((expression) =>
            expression.or([
              expression("created_at", ">", after.createdAt),
              expression.and([
                expression("created_at", "=", after.createdAt),
                expression("run_id", ">", after.runId),
              ]),
              expression.and([
                expression("created_at", "=", after.createdAt),
                expression("run_id", "=", after.runId),
                expression("sequence", ">", after.sequence),
              ]),
            ]),
          );
        }
        const rows = await select
          .orderBy("created_at")
          .orderBy("run_id")
          .orderBy("sequence")
          .limit(limit)
          .execute();
        return rows.map(runEventFromRow);
      }),
  };
}
