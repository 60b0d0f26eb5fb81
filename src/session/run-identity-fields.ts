import type { SessionContext } from "./session-context.js";

/** The run's tenant and correlation id as accounting entry fields: each only when set. */
export function runIdentityFields(context: SessionContext): { tenantId?: string; correlationId?: string } {
  const identity = context.runIdentity;
  if (identity == null) return {};
  return {
    ...(identity.tenant_id !== null ? { tenantId: identity.tenant_id } : {}),
    ...(identity.correlation_id !== null ? { correlationId: identity.correlation_id } : {}),
  };
}
