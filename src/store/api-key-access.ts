import type { Kysely } from "kysely";
import { requireTenant } from "./require-tenant.js";
import type { RunStore } from "./run-store.js";
import type { StoredApiKey } from "./server-records.js";
import type { ApiKeysTable, StoreDatabase } from "./store-database.js";
import type { StoreGuard } from "./store-guard.js";
import { storeRecordVersion } from "./store-record-version.js";

export type ApiKeyAccess = Pick<RunStore, "createApiKey" | "findApiKey" | "listApiKeys" | "revokeApiKey">;

function fromRow(row: ApiKeysTable): StoredApiKey {
  return {
    keyId: row.key_id,
    tenantId: row.tenant_id,
    userId: row.user_id,
    role: row.role,
    name: row.name,
    secretHash: row.secret_hash,
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

/** The server's API keys: made, listed and revoked for the store's tenant; found by id across tenants. */
export function createApiKeyAccess(
  database: Kysely<StoreDatabase>,
  guard: StoreGuard,
  tenantId: string | null,
): ApiKeyAccess {
  return {
    createApiKey: (key) =>
      guard("createApiKey", { keyId: key.keyId }, async () => {
        const tenant = requireTenant(tenantId, "createApiKey");
        await database
          .insertInto("charter_api_keys")
          .values({
            key_id: key.keyId,
            v: storeRecordVersion,
            tenant_id: tenant,
            user_id: key.userId,
            role: key.role,
            name: key.name,
            secret_hash: key.secretHash,
            created_at: key.createdAt,
            revoked_at: null,
          })
          .execute();
      }),

    findApiKey: (keyId) =>
      guard("findApiKey", { keyId }, async () => {
        const row = await database
          .selectFrom("charter_api_keys")
          .selectAll()
          .where("key_id", "=", keyId)
          .executeTakeFirst();
        return row === undefined ? null : fromRow(row);
      }),

    listApiKeys: () =>
      guard("listApiKeys", {}, async () => {
        if (tenantId === null) return [];
        const rows = await database
          .selectFrom("charter_api_keys")
          .selectAll()
          .where("tenant_id", "=", tenantId)
          .orderBy("created_at")
          .orderBy("key_id")
          .execute();
        return rows.map(fromRow);
      }),

    revokeApiKey: (keyId, revokedAt) =>
      guard("revokeApiKey", { keyId }, async () => {
        if (tenantId === null) return false;
        const result = await database
          .updateTable("charter_api_keys")
          .set({ revoked_at: revokedAt })
          .where("key_id", "=", keyId)
          .where("tenant_id", "=", tenantId)
          .where("revoked_at", "is", null)
          .executeTakeFirst();
        return Number(result.numUpdatedRows) > 0;
      }),
  };
}
