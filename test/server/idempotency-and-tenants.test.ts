import { afterEach, describe, expect, it } from "vitest";
import { loadConfiguration } from "../../src/config/load-configuration.js";
import { resolveTenantSettings } from "../../src/server/tenants/resolve-tenant-settings.js";
import { type RunningServer, startRunningServer } from "./run-project.js";
import { testBackends, testSecretsKey } from "./server-harness.js";

let servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.reverse()) await server.close();
  servers = [];
});

async function running(backend: (typeof testBackends)[number]) {
  const server = await startRunningServer(backend, () => ({ kind: "text", text: "done" }));
  servers.push(server);
  return server;
}

describe.each(testBackends)("Idempotency-Key on %s", (backend) => {
  it("20 concurrent retries of one request start one run and all answer its id; another body is 422", async () => {
    const api = await running(backend);
    const operator = await api.key("acme", "operator", "ada");
    const body = { agent: "helper", prompt: "Say done.", metadata: { order: 42 } };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        api.request("POST", "/v1/runs", { key: operator, body, headers: { "idempotency-key": "order-42" } }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(202));
    const runIds = new Set(answers.map((answer) => answer.body.runId));
    expect(runIds.size).toBe(1);
    const [runId] = [...runIds] as [string];
    expect(api.dispatcher.dispatched.map((request) => request.runId)).toEqual([runId]);
    await api.dispatcher.idle();
    expect((await api.store.forTenant("acme").listRuns()).map((run) => run.runId)).toEqual([runId]);
    expect(api.model.requests.length).toBe(1);

    // A later retry, asking to wait this time: the same run, finished.
    const later = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { ...body, wait: true },
      headers: { "idempotency-key": "order-42" },
    });
    expect(later.status).toBe(200);
    expect(later.body).toMatchObject({ runId, status: "completed" });

    // The same key for another request.
    const reused = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { ...body, prompt: "Say something else." },
      headers: { "idempotency-key": "order-42" },
    });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toMatchObject({
      code: "IDEMPOTENCY_KEY_REUSED",
      class: "validation_error",
      details: { idempotencyKey: "order-42", runId },
    });
    // Keys are per tenant: another tenant's request with the same key is its own run.
    const globex = await api.key("globex", "operator", "ada");
    const theirs = await api.request("POST", "/v1/runs", {
      key: globex,
      body,
      headers: { "idempotency-key": "order-42" },
    });
    expect(theirs.status).toBe(202);
    expect(theirs.body.runId).not.toBe(runId);
    expect(api.dispatcher.dispatched.length).toBe(2);
  });
});

describe.each(testBackends)("tenant configuration on %s", (backend) => {
  it("an admin sets allowed agents and provider keys; keys are never answered; runs of other agents are refused", async () => {
    const api = await running(backend);
    const admin = await api.key("acme", "admin");
    const operator = await api.key("acme", "operator");
    const empty = await api.request("GET", "/v1/tenant/config", { key: admin });
    expect(empty.body).toEqual({ tenantId: "acme", configuration: {}, updatedAt: null });

    const put = await api.request("PUT", "/v1/tenant/config", {
      key: admin,
      body: {
        allowedAgents: ["recorder"],
        models: ["local/m"],
        providers: { local: { apiKey: "sk-tenant-acme-secret", baseUrl: "http://127.0.0.1:9/v1" } },
      },
    });
    expect(put.status).toBe(200);
    expect(JSON.stringify(put.body)).not.toContain("sk-tenant-acme-secret");
    expect(put.body.configuration.providers.local).toEqual({
      apiKey: "[REDACTED:tenant.providers.local.apiKey]",
      baseUrl: "http://127.0.0.1:9/v1",
    });
    const read = await api.request("GET", "/v1/tenant/config", { key: admin });
    expect(read.body.configuration).toEqual(put.body.configuration);
    expect(JSON.stringify(read.body)).not.toContain("sk-tenant-acme-secret");

    // Written back as read (the key as its marker): the stored key is kept.
    const edited = { ...read.body.configuration, allowedAgents: ["recorder", "other"] };
    expect((await api.request("PUT", "/v1/tenant/config", { key: admin, body: edited })).status).toBe(200);
    const settings = await resolveTenantSettings({
      store: api.store,
      tenantId: "acme",
      configuration: (await loadConfiguration({ cwd: api.directory, homeDirectory: api.directory }))
        .configuration,
      processEnvironment: {},
      secretsKey: testSecretsKey,
    });
    expect(settings.allowedAgents).toEqual(["recorder", "other"]);
    expect(settings.providers.local).toEqual({
      apiKey: "sk-tenant-acme-secret",
      apiKeySource: "tenant",
      baseUrl: "http://127.0.0.1:9/v1",
    });

    const refused = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "helper", prompt: "x" },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: "PERMISSION_DENIED",
      class: "permission_error",
      details: { reason: "agent_not_allowed", agent: "helper" },
    });
    // auto could choose an agent the tenant may not run: the tenant names one of its own.
    const auto = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "auto", prompt: "x" },
    });
    expect(auto.status).toBe(403);
    expect(auto.body.error.details).toMatchObject({ reason: "agent_not_allowed", agent: "auto" });
    expect(api.dispatcher.dispatched).toEqual([]);
    // Another tenant's configuration is its own.
    const globexAdmin = await api.key("globex", "admin");
    expect((await api.request("GET", "/v1/tenant/config", { key: globexAdmin })).body.configuration).toEqual(
      {},
    );
    expect(
      (
        await api.request("POST", "/v1/runs", {
          key: await api.key("globex", "operator"),
          body: { agent: "helper", prompt: "x" },
        })
      ).status,
    ).toBe(202);
    // Unknown fields are refused.
    const typo = await api.request("PUT", "/v1/tenant/config", { key: admin, body: { allowedAgent: ["x"] } });
    expect(typo.status).toBe(400);
    expect(typo.body.error.details.issues[0].path).toBe("body/allowedAgent");
  });
});

describe("a tenant's provider key", () => {
  it("reaches the model for that tenant's runs only, and never its transcript", async () => {
    const api = await running("sqlite");
    const admin = await api.key("acme", "admin");
    await api.request("PUT", "/v1/tenant/config", {
      key: admin,
      body: { providers: { local: { apiKey: "sk-tenant-acme-0123" } } },
    });
    const ours = await api.request("POST", "/v1/runs", {
      key: await api.key("acme", "operator"),
      body: { agent: "helper", prompt: "Say done.", wait: true },
    });
    expect(ours.body.status).toBe("completed");
    expect(api.model.requests[0]?.headers.authorization).toBe("Bearer sk-tenant-acme-0123");
    const transcript = await api.request("GET", `/v1/runs/${ours.body.runId}/transcript`, { key: admin });
    expect(JSON.stringify(transcript.body)).not.toContain("sk-tenant-acme-0123");
    const theirs = await api.request("POST", "/v1/runs", {
      key: await api.key("globex", "operator"),
      body: { agent: "helper", prompt: "Say done.", wait: true },
    });
    expect(theirs.body.status).toBe("completed");
    expect(api.model.requests[1]?.headers.authorization).toBeUndefined();
    // Each run's ROUTED event says whose key its provider used: the tenant's, or nobody's; never the key.
    const routedOf = async (tenantId: string, runId: string) =>
      (await api.store.forTenant(tenantId).readRunEvents(runId)).find((event) => event.type === "ROUTED");
    const ourRouted = await routedOf("acme", ours.body.runId);
    expect(ourRouted?.data.provider_key_sources).toEqual({ local: "tenant" });
    expect(JSON.stringify(ourRouted)).not.toContain("sk-tenant-acme-0123");
    expect((await routedOf("globex", theirs.body.runId))?.data.provider_key_sources).toEqual({ local: null });
  });
});

describe("resolveTenantSettings", () => {
  it("takes each provider's key from the tenant, else the server configuration, else the environment, and says which", async () => {
    const api = await running("sqlite");
    await api.store
      .forTenant("acme")
      .putTenantConfiguration({ v: 1, providers: { openai: { apiKey: "sk-tenant" } } }, 1);
    const configuration = {
      providers: {
        openai: { apiKey: "sk-server" },
        anthropic: { apiKey: "sk-server-anthropic" },
        local: { apiKey: null, baseUrl: "http://127.0.0.1:1/v1" },
        ollama: { apiKey: null, baseUrl: "" },
      },
    } as unknown as Parameters<typeof resolveTenantSettings>[0]["configuration"];
    const settings = await resolveTenantSettings({
      store: api.store,
      tenantId: "acme",
      configuration,
      processEnvironment: { CHARTER_PROVIDER_LOCAL_API_KEY: "sk-environment" },
    });
    expect(settings.providers).toEqual({
      anthropic: { apiKey: "sk-server-anthropic", apiKeySource: "server", baseUrl: null },
      local: { apiKey: "sk-environment", apiKeySource: "environment", baseUrl: "http://127.0.0.1:1/v1" },
      ollama: { apiKey: null, apiKeySource: null, baseUrl: null },
      openai: { apiKey: "sk-tenant", apiKeySource: "tenant", baseUrl: null },
    });
    expect(settings.secrets.map((secret) => secret.label)).toEqual([
      "server.providers.anthropic.apiKey",
      "environment.providers.local.apiKey",
      "tenant.providers.openai.apiKey",
    ]);
    expect(settings.allowedAgents).toBeNull();
    // Another tenant gets the server's and the environment's keys only.
    const other = await resolveTenantSettings({
      store: api.store,
      tenantId: "globex",
      configuration,
      processEnvironment: {},
    });
    expect(other.providers.openai).toEqual({ apiKey: "sk-server", apiKeySource: "server", baseUrl: null });
  });
});
