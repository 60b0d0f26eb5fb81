/** What the server keeps beside the runs (schema 8): API keys, idempotency keys, security events, tenant settings. */

/** An API key to store: the hash of the key (never the key), and who it speaks for. */
export interface ApiKeyInput {
  /** The key's public id (part of the key, shown by `charter keys list`). */
  readonly keyId: string;
  readonly userId: string | null;
  readonly role: string;
  readonly name: string | null;
  /** The hash the key is checked against. */
  readonly secretHash: string;
  readonly createdAt: number;
}

export interface StoredApiKey extends ApiKeyInput {
  readonly tenantId: string;
  /** When the key was revoked (it no longer authenticates), or null. */
  readonly revokedAt: number | null;
}

/** A request's Idempotency-Key, as the first request with it claims it. */
export interface IdempotencyClaim {
  readonly idempotencyKey: string;
  /** The hash of what the request asked for: a retry must ask for exactly the same. */
  readonly requestHash: string;
  /** The run the first request started. */
  readonly runId: string;
  readonly createdAt: number;
}

/** What claiming an Idempotency-Key found: this request claimed it, or an earlier one had (what it asked, its run). */
export type IdempotencyClaimResult =
  | { readonly claimed: true }
  | { readonly claimed: false; readonly existing: IdempotencyClaim };

/** A security event to record for the store's tenant (the caller's). */
export interface SecurityEventInput {
  readonly eventId: string;
  /** `tenant_scope_violation`. */
  readonly kind: string;
  readonly clientAddress: string;
  readonly userId: string | null;
  /** What was asked for (method, route, the id named): never another tenant's data. */
  readonly details: Readonly<Record<string, unknown>>;
  readonly createdAt: number;
}

export interface StoredSecurityEvent extends SecurityEventInput {
  readonly tenantId: string;
}

/** A tenant's configuration document as stored (validated by the server before it is stored). */
export interface StoredTenantConfiguration {
  readonly tenantId: string;
  readonly configuration: unknown;
  readonly updatedAt: number;
}
