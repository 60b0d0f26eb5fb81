import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { openSealedSecret, providerKeyContext, sealSecret } from "../../src/server/tenants/sealed-secret.js";
import { loadTenantSecretsKey } from "../../src/server/tenants/tenant-secrets-key.js";
import { type RunningServer, startRunningServer } from "./run-project.js";
import { startTestServer, type TestServer, testBackends } from "./server-harness.js";

let servers: (RunningServer | TestServer)[] = [];
afterEach(async () => {
  for (const server of servers.reverse()) await server.close();
  servers = [];
});

/** The provider key as the store holds it, read past the API. */
async function storedKey(server: TestServer, tenantId: string): Promise<string | undefined> {
  const stored = await server.store.forTenant(tenantId).getTenantConfiguration();
  const configuration = stored?.configuration as
    | { providers?: Record<string, { apiKey?: string }> }
    | undefined;
  return configuration?.providers?.local?.apiKey;
}

describe("sealed secrets", () => {
  it("open with the key and context they were sealed with only; a changed byte does not open", () => {
    const key = randomBytes(32);
    const context = providerKeyContext("acme", "openai");
    const sealed = sealSecret("sk-live-0123", key, context);
    expect(sealed.startsWith("charter-sealed:v1:")).toBe(true);
    expect(sealed).not.toContain("sk-live");
    expect(openSealedSecret(sealed, key, context)).toBe("sk-live-0123");
    // Sealed twice, two texts (a fresh nonce each time).
    expect(sealSecret("sk-live-0123", key, context)).not.toBe(sealed);
    expect(openSealedSecret(sealed, randomBytes(32), context)).toBeNull();
    expect(openSealedSecret(sealed, key, providerKeyContext("globex", "openai"))).toBeNull();
    expect(openSealedSecret(sealed, key, providerKeyContext("acme", "anthropic"))).toBeNull();
    const at = sealed.length - 5;
    const tampered = `${sealed.slice(0, at)}${sealed[at] === "A" ? "B" : "A"}${sealed.slice(at + 1)}`;
    expect(openSealedSecret(tampered, key, context)).toBeNull();
    expect(openSealedSecret("charter-sealed:v1:garbage", key, context)).toBeNull();
  });

  it("take the secrets key from CHARTER_SECRETS_KEY, else a key file beside a SQLite store, else none", async () => {
    const directory = await mkdtemp(join(tmpdir(), "charter-secrets-"));
    const given = randomBytes(32);
    expect(
      await loadTenantSecretsKey({
        storeUrl: "postgres://127.0.0.1/x",
        processEnvironment: { CHARTER_SECRETS_KEY: given.toString("base64") },
      }),
    ).toEqual(given);
    expect(
      await loadTenantSecretsKey({ storeUrl: "postgres://127.0.0.1/x", processEnvironment: {} }),
    ).toBeNull();
    const short = await loadTenantSecretsKey({
      storeUrl: "postgres://127.0.0.1/x",
      processEnvironment: { CHARTER_SECRETS_KEY: randomBytes(16).toString("base64") },
    }).catch((error: unknown) => error);
    expect(CharterError.isInstance(short) && [short.code, short.details.source]).toEqual([
      "CONFIGURATION_INVALID",
      "CHARTER_SECRETS_KEY",
    ]);
    // SQLite: made once beside the database (in a folder not made yet), readable by its owner only, then reused.
    const database = join(directory, "nested", "charter.db");
    const made = await loadTenantSecretsKey({ storeUrl: `sqlite://${database}`, processEnvironment: {} });
    expect(made?.length).toBe(32);
    expect((await stat(`${database}.secrets-key`)).mode & 0o777).toBe(0o600);
    expect(await loadTenantSecretsKey({ storeUrl: `sqlite://${database}`, processEnvironment: {} })).toEqual(
      made,
    );
    expect(Buffer.from((await readFile(`${database}.secrets-key`, "utf8")).trim(), "base64")).toEqual(
      Buffer.from(made ?? []),
    );
  });
});

describe.each(testBackends)("tenants' provider keys in the store on %s", (backend) => {
  it("are stored sealed, never in the clear, and still reach the model for the tenant's runs", async () => {
    const api = await startRunningServer(backend, () => ({ kind: "text", text: "done" }));
    servers.push(api);
    const admin = await api.key("acme", "admin");
    const put = await api.request("PUT", "/v1/tenant/config", {
      key: admin,
      body: { providers: { local: { apiKey: "sk-acme-sealed-0123" } } },
    });
    expect(put.status).toBe(200);
    const stored = await storedKey(api, "acme");
    expect(stored?.startsWith("charter-sealed:v1:")).toBe(true);
    const row = JSON.stringify(await api.store.forTenant("acme").getTenantConfiguration());
    expect(row).not.toContain("sk-acme-sealed");
    // Written back as read (the marker): the sealed key is kept as it was.
    const read = await api.request("GET", "/v1/tenant/config", { key: admin });
    await api.request("PUT", "/v1/tenant/config", { key: admin, body: read.body.configuration });
    expect(await storedKey(api, "acme")).toBe(stored);
    const run = await api.request("POST", "/v1/runs", {
      key: await api.key("acme", "operator"),
      body: { agent: "helper", prompt: "Say done.", wait: true },
    });
    expect(run.body.status).toBe("completed");
    expect(api.model.requests[0]?.headers.authorization).toBe("Bearer sk-acme-sealed-0123");
  });

  it("a sealed key copied into another tenant's document does not open there: the run fails, typed, and the model is never called", async () => {
    const api = await startRunningServer(backend, () => ({ kind: "text", text: "done" }));
    servers.push(api);
    await api.request("PUT", "/v1/tenant/config", {
      key: await api.key("acme", "admin"),
      body: { providers: { local: { apiKey: "sk-acme-only" } } },
    });
    const sealed = await storedKey(api, "acme");
    await api.store
      .forTenant("globex")
      .putTenantConfiguration({ v: 1, providers: { local: { apiKey: sealed } } }, 1);
    const run = await api.request("POST", "/v1/runs", {
      key: await api.key("globex", "operator"),
      body: { agent: "helper", prompt: "Say done.", wait: true },
    });
    expect(run.body).toMatchObject({ status: "failed", errorCode: "TENANT_SECRET_UNREADABLE" });
    expect(api.model.requests).toEqual([]);
    const events = await api.store.forTenant("globex").readRunEvents(run.body.runId);
    expect(events.at(-1)).toMatchObject({
      type: "FAILED",
      data: { error: { code: "TENANT_SECRET_UNREADABLE" } },
    });
  });
});

describe("a server without a secrets key", () => {
  it("refuses to store a provider key (422 naming CHARTER_SECRETS_KEY) and stores nothing; the rest of the document is accepted", async () => {
    const api = await startTestServer("sqlite", { secretsKey: null });
    servers.push(api);
    const admin = await api.key("acme", "admin");
    const refused = await api.request("PUT", "/v1/tenant/config", {
      key: admin,
      body: { allowedAgents: ["helper"], providers: { local: { apiKey: "sk-nowhere" } } },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: "TENANT_SECRETS_KEY_MISSING",
      class: "validation_error",
      details: { provider: "local", field: "providers.local.apiKey", variable: "CHARTER_SECRETS_KEY" },
    });
    expect(await api.store.forTenant("acme").getTenantConfiguration()).toBeNull();
    const accepted = await api.request("PUT", "/v1/tenant/config", {
      key: admin,
      body: { allowedAgents: ["helper"], providers: { local: { baseUrl: "http://127.0.0.1:9/v1" } } },
    });
    expect(accepted.status).toBe(200);
  });
});
