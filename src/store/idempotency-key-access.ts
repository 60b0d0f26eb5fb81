import type { Kysely } from "kysely";
import { requireTenant } from "./require-tenant.js";
import type { RunStore } from "./run-store.js";
import type { StoreDatabase } from "./store-database.js";
import { toStoreError } from "./store-errors.js";
import type { StoreGuard } from "./store-guard.js";
import { storeRecordVersion } from "./store-record-version.js";

export type IdempotencyKeyAccess = Pick<RunStore, "claimIdempotencyKey" | "releaseIdempotencyKey">;

/**
 * Idempotency keys, unique per tenant by the table's primary key: of any number of concurrent claims of one key,
 * the database lets exactly one insert through, and every other reads back what that one stored.
 */
export function createIdempotencyKeyAccess(
  database: Kysely<StoreDatabase>,
  guard: StoreGuard,
  tenantId: string | null,
): IdempotencyKeyAccess {
  async function readClaim(tenant: string, idempotencyKey: string) {
    const row = await database
      .selectFrom("charter_idempotency_keys")
      .selectAll()
      .where("tenant_id", "=", tenant)
      .where("idempotency_key", "=", idempotencyKey)
      .executeTakeFirst();
    return row === undefined
      ? null
      : {
          idempotencyKey: row.idempotency_key,
          requestHash: row.request_hash,
          runId: row.run_id,
          createdAt: Number(row.created_at),
        };
  }

  return {
    claimIdempotencyKey: (claim) =>
      guard("claimIdempotencyKey", { idempotencyKey: claim.idempotencyKey }, async () => {
        const tenant = requireTenant(tenantId, "claimIdempotencyKey");
        try {
          await database
            .insertInto("charter_idempotency_keys")
            .values({
              tenant_id: tenant,
              idempotency_key: claim.idempotencyKey,
              v: storeRecordVersion,
              request_hash: claim.requestHash,
              run_id: claim.runId,
              created_at: claim.createdAt,
            })
            .execute();
          return { claimed: true } as const;
        } catch (error) {
          if (toStoreError(error, "claimIdempotencyKey").details.reason !== "duplicate_record") throw error;
          const existing = await readClaim(tenant, claim.idempotencyKey);
          // Released between our insert and this read: the claim is free again, so try once more.
          if (existing === null) throw error;
          return { claimed: false, existing } as const;
        }
      }),

    releaseIdempotencyKey: (idempotencyKey, runId) =>
      guard("releaseIdempotencyKey", { idempotencyKey }, async () => {
        const tenant = requireTenant(tenantId, "releaseIdempotencyKey");
        await database
          .deleteFrom("charter_idempotency_keys")
          .where("tenant_id", "=", tenant)
          .where("idempotency_key", "=", idempotencyKey)
          .where("run_id", "=", runId)
          .execute();
      }),
  };
}
