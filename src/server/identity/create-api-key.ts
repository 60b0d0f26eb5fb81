import { CharterError } from "../../foundation/charter-error.js";
import type { RunStore } from "../../store/run-store.js";
import type { StoredApiKey } from "../../store/server-records.js";
import { apiKeyHash, newApiKeyText } from "./api-key-text.js";
import { isServerRole, serverRoles } from "./server-permissions.js";

/**
 * Makes an API key for the store's tenant (`store.forTenant(tenant)`): stores its hash and returns the key, which
 * is never stored or shown again.
 */
export async function createApiKey(
  store: RunStore,
  request: {
    readonly role: string;
    readonly userId: string | null;
    readonly name: string | null;
    readonly now: number;
  },
): Promise<{ readonly key: string; readonly record: StoredApiKey }> {
  const tenantId = store.tenantId;
  if (tenantId === null || tenantId === "") {
    throw new CharterError("ARGUMENT_INVALID", "an API key is for one tenant: give --tenant", {
      details: { argument: "tenant" },
    });
  }
  if (!isServerRole(request.role)) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `the role must be one of ${serverRoles.join(", ")}, not '${request.role}'`,
      { details: { argument: "role", value: request.role, allowed: [...serverRoles] } },
    );
  }
  const { keyId, key } = newApiKeyText();
  const record = {
    keyId,
    userId: request.userId,
    role: request.role,
    name: request.name,
    secretHash: apiKeyHash(key),
    createdAt: request.now,
  };
  await store.createApiKey(record);
  return { key, record: { ...record, tenantId, revokedAt: null } };
}

/** An API key as it is shown (`keys list`, `GET /v1/keys`): everything but its hash. */
export function apiKeyView(key: StoredApiKey) {
  return {
    keyId: key.keyId,
    tenantId: key.tenantId,
    userId: key.userId,
    role: key.role,
    name: key.name,
    createdAt: new Date(key.createdAt).toISOString(),
    revokedAt: key.revokedAt === null ? null : new Date(key.revokedAt).toISOString(),
  };
}
