import { CharterError } from "../../foundation/charter-error.js";
import type { RunStore } from "../../store/run-store.js";
import { apiKeyIdOf, apiKeyMatches, apiKeyPrefix } from "./api-key-text.js";
import type { CallerIdentity } from "./caller-identity.js";
import type { JwtVerifier } from "./jwt-verifier.js";
import type { LocalViewerSessions } from "./local-viewer-sessions.js";
import { isServerRole } from "./server-permissions.js";

/** Reads who made a request from its `Authorization` header. */
export type Authenticator = (authorization: string | undefined) => Promise<CallerIdentity>;

/**
 * `Authorization: Bearer <credential>`: an API key (`chk_...`, checked against the hash stored for its id) or, when
 * the server has `server.auth.jwt`, a JWT. Anything else is `AUTH_INVALID` with `details.reason`: no credentials,
 * another scheme, a malformed or unknown key (a wrong secret reads as unknown), a revoked key, or the JWT's own
 * reason. Only a caller holding the key itself learns that it was revoked.
 */
export function createAuthenticator(options: {
  readonly store: RunStore;
  readonly jwt: JwtVerifier | null;
  /** `charter view`'s sessions: a credential of one of them is its local viewer. */
  readonly localSessions?: LocalViewerSessions;
}): Authenticator {
  return async (authorization) => {
    if (authorization === undefined || authorization.trim() === "") {
      throw authInvalid(
        "missing_credentials",
        "this route needs credentials: Authorization: Bearer <API key or JWT>",
      );
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match === null) {
      throw authInvalid("scheme_unsupported", "credentials go in Authorization: Bearer <API key or JWT>");
    }
    const token = match[1] as string;
    const local = options.localSessions?.identityOf(token) ?? null;
    if (local !== null) return local;
    if (token.startsWith(apiKeyPrefix)) return apiKeyIdentity(options.store, token);
    if (options.jwt === null) {
      throw authInvalid(
        "jwt_not_configured",
        "the bearer token is not an API key (chk_...), and this server verifies no JWTs (server.auth.jwt)",
      );
    }
    return options.jwt(token);
  };
}

async function apiKeyIdentity(store: RunStore, key: string): Promise<CallerIdentity> {
  const keyId = apiKeyIdOf(key);
  if (keyId === null) throw authInvalid("api_key_malformed", "the API key is not one this server makes");
  const stored = await store.findApiKey(keyId);
  if (stored === null || !apiKeyMatches(key, stored.secretHash)) {
    throw authInvalid("api_key_unknown", "the API key is not known to this server", { keyId });
  }
  if (stored.revokedAt !== null) {
    throw authInvalid("api_key_revoked", "the API key was revoked", { keyId });
  }
  if (!isServerRole(stored.role))
    throw authInvalid("api_key_unknown", "the API key has no valid role", { keyId });
  return {
    tenantId: stored.tenantId,
    userId: stored.userId,
    role: stored.role,
    credential: { kind: "api_key", keyId },
  };
}

function authInvalid(reason: string, message: string, details: Record<string, unknown> = {}): CharterError {
  return new CharterError("AUTH_INVALID", message, { details: { reason, ...details } });
}
