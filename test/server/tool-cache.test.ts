import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { acceptRunRequest } from "../../src/server/execution/accept-run-request.js";
import { executeRunRequest } from "../../src/server/execution/execute-run-request.js";
import type { RunExecutionContext } from "../../src/server/execution/run-execution-context.js";
import type { RunRequest } from "../../src/server/execution/run-request.js";
import {
  executionContext,
  postgresTestUrl,
  reportStep,
  runRequest,
  type ServerWorkspace,
  type serverWorkspace,
  testStoreOn,
  testWorkspace,
  toolAnswers,
  wireMessages,
} from "./execution-harness.js";

const backends = postgresTestUrl === "" ? ["sqlite"] : ["sqlite", "postgres"];

/** The prompt names the calls of the first turn: `read=<key>`, `write=<key>`, `remove=<key>` (any number). */
async function scriptedWorkspace(
  tool?: Parameters<typeof serverWorkspace>[0]["tool"],
): Promise<ServerWorkspace> {
  return testWorkspace({
    ...(tool !== undefined ? { tool } : {}),
    respond: (request) => {
      if (toolAnswers(request) > 0) return reportStep("done");
      const prompt = wireMessages(request).at(-1)?.content ?? "";
      const names = { read: "rest__read", write: "rest__record", remove: "rest__remove" } as const;
      const calls = [...prompt.matchAll(/(read|write|remove)=(\w+)/g)].map((match, index) => ({
        id: `call_${index}`,
        name: names[match[1] as keyof typeof names],
        arguments: { key: match[2] as string },
      }));
      return { kind: "tool_calls", calls };
    },
  });
}

interface ToolCallTelemetry {
  readonly tool: string;
  readonly cache_hit: boolean | null;
  readonly summary: string;
}

async function runAndReadToolCalls(
  context: RunExecutionContext,
  overrides: Partial<RunRequest>,
): Promise<ToolCallTelemetry[]> {
  const request = runRequest(overrides);
  await acceptRunRequest(request, context);
  const outcome = await executeRunRequest(request, context);
  expect(outcome.status).toBe("completed");
  const events = await context.store.forTenant(request.tenantId).readRunEvents(request.runId);
  const completed = events.find((event) => event.type === "COMPLETED");
  return (completed?.data.tool_calls ?? []) as ToolCallTelemetry[];
}

describe.each(backends)("the read-only tool cache of server runs on %s", (backend) => {
  it("serves a read to the same tenant and role within its TTL, never to another role or tenant, and forgets it after a write through the same tools", async () => {
    const space = await scriptedWorkspace();
    const testStore = await testStoreOn(backend, space.directory);
    const environment = deterministicEnvironment({ start: Date.UTC(2026, 0, 1) });
    const context = executionContext(space, testStore.store, { environment });
    const gets = () => space.tools.requests.filter((sent) => sent.method === "GET").length;
    const read = (overrides: Partial<RunRequest>) =>
      runAndReadToolCalls(context, { prompt: "read=alpha", ...overrides });
    const hit = [expect.objectContaining({ tool: "rest__read", cache_hit: true, summary: "ok" })];
    const miss = [expect.objectContaining({ tool: "rest__read", cache_hit: false, summary: "ok" })];

    expect(await read({ role: "operator" })).toEqual(miss);
    expect(gets()).toBe(1);
    // The same tenant and role: answered from the cache, the tool server not called again (another user too).
    expect(await read({ role: "operator", userId: "bob" })).toEqual(hit);
    expect(gets()).toBe(1);
    // Another role of the tenant, another tenant: their own lookups.
    expect(await read({ role: "viewer" })).toEqual(miss);
    expect(await read({ role: "admin" })).toEqual(miss);
    expect(await read({ tenantId: "globex", role: "operator" })).toEqual(miss);
    expect(gets()).toBe(4);
    expect(await read({ role: "viewer" })).toEqual(hit);
    expect(gets()).toBe(4);

    // 90 s by default: still served a millisecond before, read again at the TTL.
    environment.advance(89_999);
    expect(await read({ role: "operator" })).toEqual(hit);
    environment.advance(1);
    expect(await read({ role: "operator" })).toEqual(miss);
    expect(await read({ role: "viewer" })).toEqual(miss);
    expect(await read({ tenantId: "globex", role: "operator" })).toEqual(miss);
    expect(gets()).toBe(7);
    expect(await read({ role: "viewer" })).toEqual(hit);

    // A write through the same tools (a REST tool) forgets the tenant's cached reads of them, every role's; a write
    // itself is never cached: both writes run.
    for (let index = 0; index < 2; index += 1) {
      expect(await runAndReadToolCalls(context, { role: "operator", prompt: "write=alpha" })).toEqual([
        expect.objectContaining({ tool: "rest__record", cache_hit: null, summary: "ok" }),
      ]);
    }
    expect(space.tools.requests.filter((sent) => sent.method === "POST")).toHaveLength(2);
    expect(await read({ role: "viewer" })).toEqual(miss);
    expect(await read({ role: "operator" })).toEqual(miss);
    expect(gets()).toBe(9);
    // Another tenant's entries are its own: still served.
    expect(await read({ tenantId: "globex", role: "operator" })).toEqual(hit);
    expect(gets()).toBe(9);
  });

  it("takes per-tool TTLs from toolCache and server.toolCache.defaultTtl for the others (null: only those named)", async () => {
    const space = await scriptedWorkspace();
    const configurationPath = join(space.directory, ".charter.json");
    const configuration = JSON.parse(await readFile(configurationPath, "utf8")) as Record<string, unknown>;
    await writeFile(configurationPath, JSON.stringify({ ...configuration, toolCache: { rest__read: "5s" } }));
    const testStore = await testStoreOn(backend, space.directory);
    const environment = deterministicEnvironment({ start: Date.UTC(2026, 0, 1) });
    const gets = () => space.tools.requests.filter((sent) => sent.method === "GET").length;
    for (const defaultTtl of [90_000, null]) {
      const context = executionContext(space, testStore.store, {
        environment,
        toolCacheDefaultTtl: defaultTtl,
      });
      const before = gets();
      await runAndReadToolCalls(context, { prompt: `read=k${String(defaultTtl)}` });
      expect(await runAndReadToolCalls(context, { prompt: `read=k${String(defaultTtl)}` })).toEqual([
        expect.objectContaining({ cache_hit: true }),
      ]);
      environment.advance(5_000);
      expect(await runAndReadToolCalls(context, { prompt: `read=k${String(defaultTtl)}` })).toEqual([
        expect.objectContaining({ cache_hit: false }),
      ]);
      expect(gets() - before).toBe(2);
    }
    // Without a TTL from either, a read is never cached.
    await writeFile(configurationPath, JSON.stringify(configuration));
    const uncached = executionContext(space, testStore.store, { environment, toolCacheDefaultTtl: null });
    for (let index = 0; index < 2; index += 1) {
      expect(await runAndReadToolCalls(uncached, { prompt: "read=plain" })).toEqual([
        expect.objectContaining({ cache_hit: null }),
      ]);
    }
    expect(space.tools.requests.filter((sent) => sent.path === "/items/plain")).toHaveLength(2);
  });

  it("never runs a failed write again by itself: the model is told, and only a new call would run it", async () => {
    let posts = 0;
    const space = await scriptedWorkspace((request) => {
      if (request.method !== "POST") return { body: { done: request.method, path: request.path } };
      posts += 1;
      return { status: 503, body: { error: "unavailable" } };
    });
    const testStore = await testStoreOn(backend, space.directory);
    const context = executionContext(space, testStore.store);
    const calls = await runAndReadToolCalls(context, { prompt: "write=alpha read=alpha" });
    expect(calls).toEqual([
      expect.objectContaining({ tool: "rest__record", summary: expect.stringMatching(/^failed: /) }),
      expect.objectContaining({ tool: "rest__read", summary: "ok", cache_hit: false }),
    ]);
    expect(posts).toBe(1);
    const told = wireMessages(space.model.requests.at(-1)!).filter((message) => message.role === "tool");
    expect(told[0]?.content).toMatch(/^\(tool failed/);
  });
});
