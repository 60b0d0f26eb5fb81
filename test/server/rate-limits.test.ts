import { afterEach, describe, expect, it } from "vitest";
import { serverSchema } from "../../src/config/server-configuration-schema.js";
import { createServer } from "../../src/server/create-server.js";
import { openRunStore } from "../../src/store/open-run-store.js";
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

async function statuses(api: TestServer, key: string | null, count: number): Promise<number[]> {
  const answered: number[] = [];
  for (let index = 0; index < count; index++) {
    answered.push((await api.request("GET", "/v1/runs", { key })).status);
  }
  return answered;
}

describe.each(testBackends)("request rate limits on %s", (backend) => {
  it("a client address may make 120 requests a minute by default; the 121st is 429 rate_limit_exceeded with Retry-After, the next window is open again", async () => {
    const api = await server(backend);
    const key = await api.key("acme", "viewer", "vic");
    // 20 s into the window: the answer says the window ends in 40 s.
    api.environment.advance(20_000);
    expect(await statuses(api, key, 120)).toEqual(Array(120).fill(200));
    const refused = await api.request("GET", "/v1/runs", { key });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("40");
    expect(refused.body.error).toMatchObject({
      code: "RATE_LIMIT_EXCEEDED",
      class: "rate_limit_exceeded",
      details: { scope: "address", limit: 120, windowSeconds: 60, retryAfterSeconds: 40 },
    });
    // Whoever asks from the address, even without credentials (guessing keys is limited as well)...
    expect((await api.request("GET", "/v1/runs", { key: null })).status).toBe(429);
    // ...but health stays reachable.
    expect((await api.request("GET", "/healthz")).status).toBe(200);
    api.environment.advance(39_000);
    expect((await api.request("GET", "/v1/runs", { key })).headers.get("retry-after")).toBe("1");
    api.environment.advance(1_000);
    expect((await api.request("GET", "/v1/runs", { key })).status).toBe(200);
  });

  it("per tenant and per user limits from the configuration; another tenant and another user are counted apart", async () => {
    const api = await server(backend, {
      configuration: { rateLimits: { perAddress: 1000, perTenant: 5, perUser: 3 } },
    });
    const ada = await api.key("acme", "viewer", "ada");
    const bob = await api.key("acme", "viewer", "bob");
    const globex = await api.key("globex", "viewer", "ada");
    expect(await statuses(api, ada, 4)).toEqual([200, 200, 200, 429]);
    const userRefusal = await api.request("GET", "/v1/runs", { key: ada });
    expect(userRefusal.body.error).toMatchObject({
      code: "RATE_LIMIT_EXCEEDED",
      class: "rate_limit_exceeded",
      details: { scope: "user", limit: 3, userId: "ada" },
    });
    expect(userRefusal.headers.get("retry-after")).toBe("60");
    // ada's five requests counted against acme: bob is refused for the tenant after none of his own.
    const tenantRefusal = await api.request("GET", "/v1/runs", { key: bob });
    expect(tenantRefusal.status).toBe(429);
    expect(tenantRefusal.body.error.details).toMatchObject({ scope: "tenant", limit: 5, tenantId: "acme" });
    // A user of the same name in another tenant is another user, of another tenant.
    expect(await statuses(api, globex, 3)).toEqual([200, 200, 200]);
    api.environment.advance(60_000);
    expect(await statuses(api, bob, 1)).toEqual([200]);
  });

  it("counts in the run store: two servers on one store share the counts", async () => {
    const api = await server(backend, { configuration: { rateLimits: { perUser: 4 } } });
    const second = await openRunStore({ url: api.storeUrl, environment: api.environment });
    const other = await createServer({
      store: second,
      environment: api.environment,
      configuration: { rateLimits: { perUser: 4 } },
    });
    const otherAddress = await other.listen({ host: "127.0.0.1", port: 0 });
    cleanups.push(async () => {
      await other.close();
      await second.close();
    });
    const key = await api.key("acme", "viewer", "ada");
    const viaOther = async () =>
      (await fetch(`${otherAddress}/v1/runs`, { headers: { authorization: `Bearer ${key}` } })).status;
    expect(await statuses(api, key, 2)).toEqual([200, 200]);
    expect([await viaOther(), await viaOther(), await viaOther()]).toEqual([200, 200, 429]);
    expect(await statuses(api, key, 1)).toEqual([429]);
  });
});

describe("rateLimits in the configuration", () => {
  it("accepts positive whole numbers per tool class, refuses zero, fractions and unknown classes or fields", () => {
    expect(
      serverSchema.safeParse({
        rateLimits: { perAddress: 60, toolCalls: { perUser: { write: 2 }, perTenant: { delete: 1 } } },
      }).success,
    ).toBe(true);
    for (const rateLimits of [
      { perUser: 0 },
      { perTenant: 1.5 },
      { toolCalls: { perUser: { execute: 1 } } },
      { perMinute: 10 },
    ]) {
      expect(serverSchema.safeParse({ rateLimits }).success).toBe(false);
    }
  });
});
