import type { Kysely } from "kysely";
import type { StoreDatabase } from "./store-database.js";

/** How many run ids a scope remembers as its own before it starts over (each costs one query to learn again). */
const rememberedRunsLimit = 4096;

/**
 * The tenant a store reads and writes for (null: the default tenant, the runs stored without one), and whether a
 * run belongs to it. A run's tenant never changes once stored (no statement updates `tenant_id`), so a run found
 * to be the tenant's is remembered: the checks of a run's later batches cost no query.
 */
export interface TenantScope {
  readonly tenantId: string | null;
  /** Whether the run is stored for this tenant: false for another tenant's run and for no run at all. */
  includes(runId: string): Promise<boolean>;
  /** Records that the run is the tenant's (one this scope just created, or read back scoped). */
  remember(runId: string): void;
}

export function createTenantScope(database: Kysely<StoreDatabase>, tenantId: string | null): TenantScope {
  const own = new Set<string>();
  function remember(runId: string): void {
    if (own.size >= rememberedRunsLimit) own.clear();
    own.add(runId);
  }
  return {
    tenantId,
    remember,
    async includes(runId) {
      if (own.has(runId)) return true;
      const row = await database
        .selectFrom("charter_runs")
        .select("tenant_id")
        .where("run_id", "=", runId)
        .executeTakeFirst();
      if (row === undefined || row.tenant_id !== tenantId) return false;
      remember(runId);
      return true;
    },
  };
}
