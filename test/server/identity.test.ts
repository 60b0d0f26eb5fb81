import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { createServer as createHttpServer, type Server } from "node:http";
import { exportJWK, SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import type { ServerConfiguration } from "../../src/config/server-configuration-schema.js";
import { startTestServer, type TestServer, testBackends } from "./server-harness.js";

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function server(
  backend: (typeof testBackends)[number],
  options: Parameters<typeof startTestServer>[1] = {},
): Promise<TestServer> {
  const started = await startTestServer(backend, options);
  cleanups.push(() => started.close());
  return started;
}

describe.each(testBackends)("identity on %s", (backend) => {
  it("refuses a request without credentials, with another scheme, or with a key that is not one, 401 auth_error", async () => {
    const api = await server(backend);
    const none = await api.request("GET", "/v1/keys");
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({
      code: "AUTH_INVALID",
      class: "auth_error",
      details: { reason: "missing_credentials" },
    });
    const basic = await api.request("GET", "/v1/keys", { headers: { authorization: "Basic YWxhZGRpbg==" } });
    expect(basic.body.error.details.reason).toBe("scheme_unsupported");
    const malformed = await api.request("GET", "/v1/keys", { key: "chk_nothing" });
    expect(malformed.body.error.details.reason).toBe("api_key_malformed");
    // A real key's id with another secret reads as unknown: the secret is what proves the key.
    const real = await api.key("acme", "admin");
    const forged = `${real.slice(0, -5)}AAAAA`;
    const wrongSecret = await api.request("GET", "/v1/keys", { key: forged });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body.error.details.reason).toBe("api_key_unknown");
    // Not a key, and no JWT verification configured.
    const jwt = await api.request("GET", "/v1/keys", { key: "eyJhbGciOiJIUzI1NiJ9.e30.x" });
    expect(jwt.body.error.details.reason).toBe("jwt_not_configured");
  });

  it("roles: an admin manages keys, an operator and a viewer may not (403 permission_error); a revoked key is refused", async () => {
    const api = await server(backend);
    const admin = await api.key("acme", "admin", "ada");
    const made = await api.request("POST", "/v1/keys", {
      key: admin,
      body: { role: "viewer", userId: "vic", name: "dashboard" },
    });
    expect(made.status).toBe(201);
    expect(made.body.key).toMatch(/^chk_[0-9a-f]{16}_/);
    expect(made.body.apiKey).toMatchObject({
      tenantId: "acme",
      role: "viewer",
      userId: "vic",
      name: "dashboard",
    });
    const viewer = made.body.key as string;
    const operator = await api.key("acme", "operator");
    for (const key of [viewer, operator]) {
      const refused = await api.request("GET", "/v1/keys", { key });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: "PERMISSION_DENIED", class: "permission_error" });
      expect(refused.body.error.details.permission).toBe("keys.manage");
    }
    const listed = await api.request("GET", "/v1/keys", { key: admin });
    expect(listed.status).toBe(200);
    expect(listed.body.keys.map((key: { role: string }) => key.role).sort()).toEqual([
      "admin",
      "operator",
      "viewer",
    ]);
    // No key text, no hash, in what is listed.
    expect(JSON.stringify(listed.body)).not.toContain(viewer.slice(21));
    expect(JSON.stringify(listed.body)).not.toContain("secretHash");
    // Revoked: the key no longer authenticates, and says so to whoever holds it.
    const keyId = made.body.apiKey.keyId as string;
    const revoked = await api.request("DELETE", `/v1/keys/${keyId}`, { key: admin });
    expect(revoked.status).toBe(200);
    expect(revoked.body.apiKey.revokedAt).not.toBeNull();
    const afterRevoke = await api.request("GET", "/v1/keys", { key: viewer });
    expect(afterRevoke.status).toBe(401);
    expect(afterRevoke.body.error.details).toMatchObject({ reason: "api_key_revoked", keyId });
    // A body field the API does not know is refused, not ignored.
    const typo = await api.request("POST", "/v1/keys", { key: admin, body: { role: "viewer", usr: "x" } });
    expect(typo.status).toBe(400);
    expect(typo.body.error).toMatchObject({ code: "REQUEST_INVALID", class: "validation_error" });
    expect(typo.body.error.details.issues[0]).toMatchObject({
      path: "body/usr",
      message: "body/usr is not a known field",
    });
    const badRole = await api.request("POST", "/v1/keys", { key: admin, body: { role: "root" } });
    expect(badRole.status).toBe(400);
    expect(badRole.body.error.details.issues[0].path).toBe("body/role");
  });

  it("another tenant's key answers 404 as a missing one, is recorded as a tenant_scope_violation, and 5 within an hour block the address for 5 minutes", async () => {
    const api = await server(backend);
    const acmeAdmin = await api.key("acme", "admin", "mallory");
    const globexKey = await api.key("globex", "viewer");
    const globexKeyId = globexKey.slice(4, 20);
    const missing = await api.request("DELETE", "/v1/keys/0000000000000000", { key: acmeAdmin });
    const foreign = await api.request("DELETE", `/v1/keys/${globexKeyId}`, { key: acmeAdmin });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("API_KEY_NOT_FOUND");
    // Nothing tells the two apart but the id each names.
    expect({ ...foreign.body.error, message: "", details: {} }).toEqual({
      ...missing.body.error,
      message: "",
      details: {},
    });
    // globex's key still works.
    expect((await api.store.findApiKey(globexKeyId))?.revokedAt).toBeNull();
    // Recorded for the caller's tenant, persisted; a missing id is no violation.
    const events = await api.store.forTenant("acme").listSecurityEvents();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: "tenant_scope_violation",
      clientAddress: "127.0.0.1",
      userId: "mallory",
      details: { method: "DELETE", route: "/v1/keys/:keyId", resource: "api_key", resourceId: globexKeyId },
    });
    expect(await api.store.forTenant("globex").listSecurityEvents()).toEqual([]);
    // Four more within the hour: the fifth blocks the address, whatever it asks and whoever asks.
    for (let attempt = 0; attempt < 3; attempt++) {
      api.environment.advance(10 * 60 * 1000);
      expect((await api.request("DELETE", `/v1/keys/${globexKeyId}`, { key: acmeAdmin })).status).toBe(404);
    }
    expect((await api.request("GET", "/v1/keys", { key: acmeAdmin })).status).toBe(200);
    expect((await api.request("DELETE", `/v1/keys/${globexKeyId}`, { key: acmeAdmin })).status).toBe(404);
    const blocked = await api.request("GET", "/v1/keys", { key: acmeAdmin });
    expect(blocked.status).toBe(403);
    expect(blocked.body.error).toMatchObject({ code: "CLIENT_BLOCKED", class: "tenant_scope_violation" });
    expect(blocked.headers.get("retry-after")).toBe("300");
    const otherTenant = await api.request("GET", "/v1/keys", { key: await api.key("globex", "admin") });
    expect(otherTenant.status).toBe(403);
    // Health stays reachable (a load balancer may share the address).
    expect((await api.request("GET", "/healthz")).status).toBe(200);
    api.environment.advance(5 * 60 * 1000 - 1000);
    expect((await api.request("GET", "/v1/keys", { key: acmeAdmin })).headers.get("retry-after")).toBe("1");
    api.environment.advance(1000);
    expect((await api.request("GET", "/v1/keys", { key: acmeAdmin })).status).toBe(200);
    expect(await api.store.forTenant("acme").listSecurityEvents()).toHaveLength(5);
  });

  it("violations spread over more than an hour do not block", async () => {
    const api = await server(backend);
    const acmeAdmin = await api.key("acme", "admin");
    const globexKeyId = (await api.key("globex", "viewer")).slice(4, 20);
    for (let attempt = 0; attempt < 6; attempt++) {
      expect((await api.request("DELETE", `/v1/keys/${globexKeyId}`, { key: acmeAdmin })).status).toBe(404);
      api.environment.advance(15 * 60 * 1000);
    }
    expect((await api.request("GET", "/v1/keys", { key: acmeAdmin })).status).toBe(200);
  });
});

/** A key pair made in the test, its public half served as a JWKS from a loopback HTTP server. */
async function identityProvider() {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = { ...(await exportJWK(publicKey)), kid: "key-1", alg: "ES256", use: "sig" };
  let fetches = 0;
  const jwksServer: Server = createHttpServer((_request, response) => {
    fetches++;
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolveListen) => jwksServer.listen(0, "127.0.0.1", resolveListen));
  const address = jwksServer.address();
  if (address === null || typeof address === "string") throw new Error("no address");
  cleanups.push(() => new Promise((resolveClose) => jwksServer.close(() => resolveClose())));
  return {
    jwksUrl: `http://127.0.0.1:${address.port}/.well-known/jwks.json`,
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
    fetches: () => fetches,
    sign: (
      claims: Record<string, unknown>,
      options: { key?: KeyObject; kid?: string; expiresAt: number; issuedAt: number },
    ) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: "ES256", kid: options.kid ?? "key-1" })
        .setIssuer("https://id.example.test/")
        .setAudience("charter")
        .setIssuedAt(Math.floor(options.issuedAt / 1000))
        .setExpirationTime(Math.floor(options.expiresAt / 1000))
        .sign(options.key ?? privateKey),
  };
}

describe("JWT credentials", () => {
  const jwtConfiguration = (source: { jwksUrl: string } | { publicKey: string }): ServerConfiguration => ({
    auth: {
      jwt: {
        issuer: "https://id.example.test/",
        audience: "charter",
        jwksUrl: "jwksUrl" in source ? source.jwksUrl : null,
        publicKey: "publicKey" in source ? source.publicKey : null,
        algorithms: null,
        claims: { tenant: "org", user: "sub", role: "charter_role" },
      },
    },
  });

  it("verifies tokens against a JWKS served over HTTP: tenant, user and role from the configured claims", async () => {
    const provider = await identityProvider();
    const api = await server("sqlite", { configuration: jwtConfiguration({ jwksUrl: provider.jwksUrl }) });
    const now = api.environment.now();
    const admin = await provider.sign(
      { org: "acme", sub: "ada", charter_role: "admin" },
      { issuedAt: now, expiresAt: now + 600_000 },
    );
    const listed = await api.request("GET", "/v1/keys", { key: admin });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ keys: [] });
    // The key made by a JWT-authenticated admin is its tenant's.
    const made = await api.request("POST", "/v1/keys", { key: admin, body: { role: "viewer" } });
    expect(made.body.apiKey.tenantId).toBe("acme");
    const viewer = await provider.sign(
      { org: "acme", sub: "vic", charter_role: "viewer" },
      { issuedAt: now, expiresAt: now + 600_000 },
    );
    expect((await api.request("GET", "/v1/keys", { key: viewer })).status).toBe(403);
    expect(provider.fetches()).toBe(1);

    // Expired by the server's clock (which the test moves), not the machine's.
    api.environment.advance(601_000);
    const expired = await api.request("GET", "/v1/keys", { key: admin });
    expect(expired.status).toBe(401);
    expect(expired.body.error).toMatchObject({
      class: "auth_error",
      details: { credential: "jwt", reason: "ERR_JWT_EXPIRED" },
    });
  });

  it("refuses a token of another key, audience or issuer, and one without a tenant or a role", async () => {
    const provider = await identityProvider();
    const api = await server("sqlite", { configuration: jwtConfiguration({ jwksUrl: provider.jwksUrl }) });
    const now = api.environment.now();
    const times = { issuedAt: now, expiresAt: now + 600_000 };
    const stranger = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    const otherKey = await provider.sign({ org: "acme", charter_role: "admin" }, { ...times, key: stranger });
    expect((await api.request("GET", "/v1/keys", { key: otherKey })).body.error.details.reason).toBe(
      "ERR_JWS_SIGNATURE_VERIFICATION_FAILED",
    );
    const unknownKid = await provider.sign(
      { org: "acme", charter_role: "admin" },
      { ...times, key: stranger, kid: "key-9" },
    );
    expect((await api.request("GET", "/v1/keys", { key: unknownKid })).body.error.details.reason).toBe(
      "ERR_JWKS_NO_MATCHING_KEY",
    );
    const noTenant = await provider.sign({ charter_role: "admin" }, times);
    expect((await api.request("GET", "/v1/keys", { key: noTenant })).body.error.details).toMatchObject({
      reason: "missing_tenant",
      claim: "org",
    });
    const badRole = await provider.sign({ org: "acme", charter_role: "root" }, times);
    expect((await api.request("GET", "/v1/keys", { key: badRole })).body.error.details).toMatchObject({
      reason: "role_invalid",
      claim: "charter_role",
    });
    const otherAudience = await new SignJWT({ org: "acme", charter_role: "admin" })
      .setProtectedHeader({ alg: "ES256", kid: "key-1" })
      .setIssuer("https://id.example.test/")
      .setAudience("someone-else")
      .setExpirationTime(Math.floor(times.expiresAt / 1000))
      .sign(stranger);
    const refused = await api.request("GET", "/v1/keys", { key: otherAudience });
    expect(refused.status).toBe(401);
  });

  it("verifies against one public key in PEM form", async () => {
    const provider = await identityProvider();
    const api = await server("sqlite", {
      configuration: jwtConfiguration({ publicKey: provider.publicKeyPem }),
    });
    const now = api.environment.now();
    const token = await provider.sign(
      { org: "globex", sub: "gus", charter_role: "admin" },
      { issuedAt: now, expiresAt: now + 60_000 },
    );
    const made = await api.request("POST", "/v1/keys", { key: token, body: { role: "operator" } });
    expect(made.status).toBe(201);
    expect(made.body.apiKey.tenantId).toBe("globex");
    expect(provider.fetches()).toBe(0);
  });
});
