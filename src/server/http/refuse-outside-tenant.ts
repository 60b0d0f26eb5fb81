import type { FastifyRequest } from "fastify";
import type { CharterError } from "../../foundation/charter-error.js";
import type { TenantScopeViolations } from "../identity/tenant-scope-violations.js";
import { identityOf } from "./request-identity.js";

/**
 * What a route does when the caller's tenant has no such resource: when another tenant has it (`ownerTenantId`
 * is a tenant other than the caller's, or the default tenant's null), records a tenant scope violation; then throws
 * the same not-found error either way, so the answer never says whether another tenant has it.
 */
export async function refuseOutsideTenant(
  request: FastifyRequest,
  violations: TenantScopeViolations,
  ownerTenantId: string | null | undefined,
  resource: { readonly kind: string; readonly id: string },
  notFound: CharterError,
): Promise<never> {
  const identity = identityOf(request);
  if (ownerTenantId !== undefined && ownerTenantId !== identity.tenantId) {
    await violations.record(identity, request.ip, {
      method: request.method,
      route: request.routeOptions.url ?? null,
      resource: resource.kind,
      resourceId: resource.id,
      requestId: request.id,
    });
  }
  throw notFound;
}
