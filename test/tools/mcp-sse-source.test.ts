import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import type { McpHttpTestServer } from "../../src/testing/mcp-http-test-server.js";
import { createDefaultPipeline } from "../../src/tools/create-default-pipeline.js";
import type { McpServerHealthState } from "../../src/tools/mcp-server-health.js";
import type { McpRemoteServerDefinition } from "../../src/tools/sources/mcp-server-definition.js";
import { createMcpSource } from "../../src/tools/sources/mcp-source.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { useRemoteMcpFixture } from "./remote-mcp-fixture.js";
import { callContext } from "./tool-call-fixture.js";

const pipeline = createDefaultPipeline();
const { testServer, track } = useRemoteMcpFixture();

function sseSource(server: McpHttpTestServer, overrides: Partial<McpRemoteServerDefinition> = {}) {
  const environment = deterministicEnvironment();
  const waiters: { state: McpServerHealthState; resolve: () => void }[] = [];
  const source = createMcpSource(
    "legacy",
    {
      type: "sse",
      url: server.sseUrl,
      reconnect: { attempts: 2, initialDelay: 250, maxDelay: 5000 },
      ...overrides,
    },
    {
      environment,
      onHealthChange(health) {
        for (const waiter of waiters.filter((candidate) => candidate.state === health.state))
          waiter.resolve();
      },
    },
  );
  track(source);
  /** Resolves when the source reports `state` (it notices a closed stream on its own, without a call). */
  const reaches = (state: McpServerHealthState) =>
    new Promise<void>((resolve) => waiters.push({ state, resolve }));
  return { source, environment, reaches };
}

describe("an MCP server over HTTP+SSE", () => {
  it("lists and calls its tools, sending the configured headers on the stream and on every message", async () => {
    const server = await testServer({ requiredAuthorization: "Bearer sse-token" });
    const { source } = sseSource(server, { headers: { Authorization: "Bearer sse-token" } });
    const registry = new ToolRegistry(await source.start());
    expect(registry.names()).toContain("legacy__echo");
    expect(registry.get("legacy__purge")!.manifest.annotations).toMatchObject({ destructiveHint: true });
    const sum = await pipeline(callContext(registry, "legacy__add", { a: 2, b: 40 }));
    expect(sum).toMatchObject({ status: "ok", content: "42" });
    expect(server.requests[0]).toMatchObject({ method: "GET", path: "/sse" });
    expect(server.requests.some((request) => request.path === "/messages")).toBe(true);
    for (const request of server.requests) expect(request.headers.authorization).toBe("Bearer sse-token");
    expect(source.health()).toMatchObject({ type: "sse", state: "healthy" });
  });

  it("notices when the server drops the session's stream, and the next call opens a new session", async () => {
    const server = await testServer();
    const { source, environment, reaches } = sseSource(server);
    const registry = new ToolRegistry(await source.start());
    const degraded = reaches("degraded");
    await server.forgetSessions();
    await degraded;
    expect(source.health()).toMatchObject({ state: "degraded", lastError: { kind: "connection_lost" } });
    const recorded = await pipeline(callContext(registry, "legacy__record", { value: "sse" }));
    expect(recorded).toMatchObject({ status: "ok", content: "recorded sse" });
    expect(server.executedCalls).toEqual([{ tool: "record", arguments: { value: "sse" } }]);
    expect(server.requests.filter((request) => request.path === "/sse")).toHaveLength(2);
    expect(source.health()).toMatchObject({ state: "healthy", reconnections: 1 });
    expect(environment.slept).toEqual([]);
  });

  it("carries on after the server restarts on the same port", async () => {
    const server = await testServer();
    const { source } = sseSource(server);
    const registry = new ToolRegistry(await source.start());
    await server.restart();
    const echoed = await pipeline(callContext(registry, "legacy__echo", { text: "after restart" }));
    expect(echoed).toMatchObject({ status: "ok", content: "after restart" });
    expect(source.health()).toMatchObject({ state: "healthy", reconnections: 1 });
  });

  it("marks a server that went away unavailable, and fails its calls as data", async () => {
    const server = await testServer();
    const { source, environment } = sseSource(server);
    const registry = new ToolRegistry(await source.start());
    await server.close();
    const result = await pipeline(callContext(registry, "legacy__echo", { text: "anyone?" }));
    expect(result).toMatchObject({ status: "failed", error_code: "MCP_SERVER_FAILED", executed: true });
    expect(environment.slept).toEqual([250]);
    expect(source.health()).toMatchObject({
      state: "unavailable",
      lastError: { code: "MCP_SERVER_FAILED", kind: "unreachable", systemCode: "ECONNREFUSED" },
    });
  });

  it("fails to start with MCP_SERVER_FAILED and the HTTP status when the stream is refused", async () => {
    const server = await testServer({ requiredAuthorization: "Bearer right" });
    const { source, environment } = sseSource(server);
    const error = await source.start().then(
      () => null,
      (rejection: unknown) => rejection,
    );
    if (!CharterError.isInstance(error)) throw new Error("expected a CharterError");
    expect(error.code).toBe("MCP_SERVER_FAILED");
    expect(error.details).toMatchObject({
      server: "legacy",
      type: "sse",
      phase: "start",
      kind: "http_status",
      httpStatus: 401,
      attempts: 1,
      url: server.sseUrl,
    });
    expect(environment.slept).toEqual([]);
    expect(source.health().state).toBe("unavailable");
  });
});
