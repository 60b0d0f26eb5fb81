import type { Kysely } from "kysely";
import { requireTenant } from "./require-tenant.js";
import type { RunStore } from "./run-store.js";
import type { StoreDatabase } from "./store-database.js";
import type { StoreGuard } from "./store-guard.js";
import { storeRecordVersion } from "./store-record-version.js";

export type TenantConfigurationAccess = Pick<RunStore, "putTenantConfiguration" | "getTenantConfiguration">;

/** The store's tenant's configuration document: one per tenant, replaced whole. */
export function createTenantConfigurationAccess(
  database: Kysely<StoreDatabase>,
  guard: StoreGuard,
  tenantId: string | null,
): TenantConfigurationAccess {
  return {
    putTenantConfiguration: (configuration, updatedAt) =>
      guard("putTenantConfiguration", {}, async () => {
        const tenant = requireTenant(tenantId, "putTenantConfiguration");
        const json = JSON.stringify(configuration);
        await database
          .insertInto("charter_tenant_configurations")
          .values({
            tenant_id: tenant,
            v: storeRecordVersion,
            configuration_json: json,
            updated_at: updatedAt,
          })
          .onConflict((conflict) =>
            conflict.column("tenant_id").doUpdateSet({ configuration_json: json, updated_at: updatedAt }),
          )
          .execute();
      }),

    getTenantConfiguration: () =>
      guard("getTenantConfiguration", {}, async () => {
        if (tenantId === null) return null;
        const row = await database
          .selectFrom("charter_tenant_configurations")
          .selectAll()
          .where("tenant_id", "=", tenantId)
          .executeTakeFirst();
        return row === undefined
          ? null
          : {
              tenantId: row.tenant_id,
              configuration: JSON.parse(row.configuration_json) as unknown,
              updatedAt: Number(row.updated_at),
            };
      }),
  };
}
