import type { Kysely } from "kysely";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { RunStore } from "./run-store.js";
import type { StoreDatabase } from "./store-database.js";
import { storeError } from "./store-errors.js";
import type { StoreGuard } from "./store-guard.js";
import { storeRecordVersion } from "./store-record-version.js";

export type ToolCacheAccess = Pick<
  RunStore,
  "cacheGet" | "cachePut" | "cachePurgeExpired" | "cachePurgeTenant"
>;

/**
 * The read-only tool cache: entries keyed by `toolRequestHash`, served while `now < expiresAt` by the
 * store's clock (or the caller's `now`). Whether a lookup is a hit or a miss is the caller's to account.
 */
export function createToolCacheAccess(
  database: Kysely<StoreDatabase>,
  guard: StoreGuard,
  environment: RuntimeEnvironment,
  tenantId: string | null,
): ToolCacheAccess {
  return {
    cacheGet: (key, now = environment.now()) =>
      guard("cacheGet", { key }, async () => {
        const row = await database
          .selectFrom("charter_tool_cache")
          .selectAll()
          .where("cache_key", "=", key)
          // The key binds the tenant already; this keeps a store to its tenant's entries whatever key it is given.
          .where("tenant_id", tenantId === null ? "is" : "=", tenantId)
          .where("expires_at", ">", now)
          .executeTakeFirst();
        if (row === undefined) return null;
        return {
          key: row.cache_key,
          server: row.server,
          tool: row.tool,
          value: JSON.parse(row.value_json) as unknown,
          createdAt: row.created_at,
          expiresAt: row.expires_at,
          tenantId: row.tenant_id,
          scope: row.scope,
        };
      }),

    cachePut: (entry) =>
      guard("cachePut", { key: entry.key }, async () => {
        if (entry.tenantId !== undefined && entry.tenantId !== tenantId) {
          throw storeError("tenant_mismatch", "a cache entry for another tenant than the store's", {
            key: entry.key,
            requestedTenantId: entry.tenantId,
          });
        }
        const row = {
          cache_key: entry.key,
          v: storeRecordVersion,
          server: entry.server,
          tool: entry.tool,
          value_json: JSON.stringify(entry.value ?? null),
          created_at: entry.createdAt ?? environment.now(),
          expires_at: entry.expiresAt,
          tenant_id: tenantId,
          scope: entry.scope ?? null,
        };
        await database
          .insertInto("charter_tool_cache")
          .values(row)
          .onConflict((conflict) =>
            conflict.column("cache_key").doUpdateSet({
              v: row.v,
              server: row.server,
              tool: row.tool,
              value_json: row.value_json,
              created_at: row.created_at,
              expires_at: row.expires_at,
              tenant_id: row.tenant_id,
              scope: row.scope,
            }),
          )
          .execute();
      }),

    cachePurgeExpired: (now = environment.now()) =>
      guard("cachePurgeExpired", {}, async () => {
        const result = await database
          .deleteFrom("charter_tool_cache")
          .where("expires_at", "<=", now)
          .executeTakeFirst();
        return Number(result.numDeletedRows);
      }),

    cachePurgeTenant: (tenantId, options = {}) =>
      guard("cachePurgeTenant", { tenantId }, async () => {
        let remove = database
          .deleteFrom("charter_tool_cache")
          .where("tenant_id", tenantId === null ? "is" : "=", tenantId);
        if (options.scope !== undefined) {
          remove = remove.where("scope", options.scope === null ? "is" : "=", options.scope);
        }
        if (options.server !== undefined) {
          remove = remove.where("server", options.server === null ? "is" : "=", options.server);
        }
        const result = await remove.executeTakeFirst();
        return Number(result.numDeletedRows);
      }),
  };
}
