import { createPublicKey, type KeyObject } from "node:crypto";
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from "jose";
import type { JwtConfiguration } from "../../config/server-configuration-schema.js";
import { CharterError } from "../../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { CallerIdentity } from "./caller-identity.js";
import { isServerRole } from "./server-permissions.js";

/** Verifies a bearer JWT and reads the caller's identity from its claims. */
export type JwtVerifier = (token: string) => Promise<CallerIdentity>;

/**
 * A verifier for `server.auth.jwt`: the signature against the key set at `jwksUrl` (fetched when first needed and
 * cached by jose, refetched for a key id it does not know) or the one `publicKey`; then issuer, audience, expiry and
 * not-before against the environment's clock; then the tenant, user and role claims. Every failure is
 * `AUTH_INVALID` with `details.reason`: jose's error code (`ERR_JWT_EXPIRED`...), or the claim that is missing or
 * not a role.
 */
export function createJwtVerifier(
  configuration: JwtConfiguration,
  environment: RuntimeEnvironment,
): JwtVerifier {
  let publicKey: KeyObject | null = null;
  if (configuration.publicKey !== null) {
    try {
      publicKey = createPublicKey(configuration.publicKey);
    } catch (error) {
      throw new CharterError(
        "CONFIGURATION_INVALID",
        "server.auth.jwt.publicKey is not a public key in PEM form (-----BEGIN PUBLIC KEY-----)",
        { details: { key: "server.auth.jwt.publicKey" }, cause: error },
      );
    }
  }
  const keySet = configuration.jwksUrl !== null ? createRemoteJWKSet(new URL(configuration.jwksUrl)) : null;
  const options = {
    issuer: configuration.issuer,
    audience: configuration.audience,
    ...(configuration.algorithms !== null ? { algorithms: configuration.algorithms } : {}),
  };
  const { claims } = configuration;

  return async (token) => {
    let payload: JWTPayload;
    try {
      const currentDate = new Date(environment.now());
      const verified =
        keySet !== null
          ? await jwtVerify(token, keySet, { ...options, currentDate })
          : await jwtVerify(token, publicKey as KeyObject, { ...options, currentDate });
      payload = verified.payload;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new CharterError("AUTH_INVALID", "the bearer token is not a valid JWT for this server", {
        details: {
          credential: "jwt",
          reason: typeof code === "string" ? code : "ERR_JWT_INVALID",
          ...(typeof (error as { claim?: unknown }).claim === "string"
            ? { claim: (error as { claim: string }).claim }
            : {}),
        },
      });
    }
    const tenant = payload[claims.tenant];
    const user = payload[claims.user];
    const role = payload[claims.role];
    if (typeof tenant !== "string" || tenant.length === 0)
      throw claimProblem(claims.tenant, "missing_tenant");
    if (!isServerRole(role)) throw claimProblem(claims.role, "role_invalid");
    return {
      tenantId: tenant,
      userId: typeof user === "string" && user.length > 0 ? user : null,
      role,
      credential: { kind: "jwt" },
    };
  };
}

function claimProblem(claim: string, reason: string): CharterError {
  return new CharterError(
    "AUTH_INVALID",
    reason === "missing_tenant"
      ? `the JWT has no tenant in its claim "${claim}"`
      : `the JWT's claim "${claim}" is not a role (admin, operator or viewer)`,
    { details: { credential: "jwt", reason, claim } },
  );
}
