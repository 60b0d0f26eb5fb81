import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { RunStore } from "../../store/run-store.js";
import type { CallerIdentity } from "./caller-identity.js";

export const tenantScopeViolationKind = "tenant_scope_violation";

export interface ViolationLimits {
  /** Violations from one address within `windowMilliseconds` that block it; default 5. */
  readonly limit: number;
  /** Default one hour. */
  readonly windowMilliseconds: number;
  /** How long an address stays blocked; default 5 minutes. */
  readonly blockMilliseconds: number;
}

export const defaultViolationLimits: ViolationLimits = {
  limit: 5,
  windowMilliseconds: 60 * 60 * 1000,
  blockMilliseconds: 5 * 60 * 1000,
};

/** Records attempts at other tenants' data and blocks the addresses they keep coming from. */
export interface TenantScopeViolations {
  /** Until when (ms since the epoch) the address is blocked, or null when it is not. */
  blockedUntil(clientAddress: string): number | null;
  /**
   * Records a violation (persisted, for the caller's tenant), then blocks the address when it has made `limit`
   * violations within the window, counted in the store across tenants and server processes.
   */
  record(
    identity: CallerIdentity,
    clientAddress: string,
    details: Readonly<Record<string, unknown>>,
  ): Promise<void>;
}

export function createTenantScopeViolations(options: {
  readonly store: RunStore;
  readonly environment: RuntimeEnvironment;
  readonly limits?: ViolationLimits;
}): TenantScopeViolations {
  const { store, environment } = options;
  const limits = options.limits ?? defaultViolationLimits;
  // The blocks this process decided; an address is unblocked when its time has passed.
  const blocked = new Map<string, number>();
  return {
    blockedUntil(clientAddress) {
      const until = blocked.get(clientAddress);
      if (until === undefined) return null;
      if (environment.now() < until) return until;
      blocked.delete(clientAddress);
      return null;
    },
    async record(identity, clientAddress, details) {
      const now = environment.now();
      await store.forTenant(identity.tenantId).recordSecurityEvent({
        eventId: environment.newId("event"),
        kind: tenantScopeViolationKind,
        clientAddress,
        userId: identity.userId,
        details,
        createdAt: now,
      });
      const count = await store.countSecurityEventsFromAddress({
        clientAddress,
        kind: tenantScopeViolationKind,
        since: now - limits.windowMilliseconds,
      });
      if (count >= limits.limit) blocked.set(clientAddress, now + limits.blockMilliseconds);
    },
  };
}
