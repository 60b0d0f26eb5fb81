import { storeError } from "./store-errors.js";

/**
 * The store's tenant, for records that always belong to one (the server's keys, idempotency keys, events and
 * tenant configurations): a store of the default tenant is refused (`tenant_mismatch`).
 */
export function requireTenant(tenantId: string | null, operation: string): string {
  if (tenantId !== null) return tenantId;
  throw storeError(
    "tenant_mismatch",
    `${operation} needs a tenant: open the store (or a forTenant view) for the tenant the record belongs to`,
    { operation },
  );
}
