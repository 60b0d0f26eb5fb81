import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { configureToolIdempotency } from "../../src/runner/configure-tool-idempotency.js";
import type { McpHttpTestServer } from "../../src/testing/mcp-http-test-server.js";
import { createDefaultPipeline } from "../../src/tools/create-default-pipeline.js";
import type { McpServerHealth } from "../../src/tools/mcp-server-health.js";
import type { McpRemoteServerDefinition } from "../../src/tools/sources/mcp-server-definition.js";
import { createMcpSource, type McpToolSource } from "../../src/tools/sources/mcp-source.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { useRemoteMcpFixture } from "./remote-mcp-fixture.js";
import { callContext } from "./tool-call-fixture.js";

const pipeline = createDefaultPipeline();
const { testServer, track, unhandled } = useRemoteMcpFixture();

function remoteSource(
  server: McpHttpTestServer,
  overrides: Partial<McpRemoteServerDefinition> = {},
  name = "remote",
) {
  const environment = deterministicEnvironment();
  const changes: McpServerHealth[] = [];
  const source = createMcpSource(
    name,
    {
      type: "http",
      url: server.streamableHttpUrl,
      reconnect: { attempts: 3, initialDelay: 100, maxDelay: 1000 },
      ...overrides,
    },
    { environment, onHealthChange: (health) => changes.push(health) },
  );
  track(source);
  return { source, environment, changes };
}

async function startFailure(source: McpToolSource): Promise<CharterError> {
  const error = await source.start().then(
    () => null,
    (rejection: unknown) => rejection,
  );
  if (!CharterError.isInstance(error)) throw new Error(`expected a CharterError, got ${String(error)}`);
  return error;
}

/** The states a server went through, without repeats (a state may be reported again with a new last error). */
function statesOf(changes: readonly McpServerHealth[]): string[] {
  const states: string[] = [];
  for (const change of changes) if (states.at(-1) !== change.state) states.push(change.state);
  return states;
}

describe("an MCP server over Streamable HTTP", () => {
  it("lists its tools with schemas and annotations, sending the configured headers with every request", async () => {
    const server = await testServer({ requiredAuthorization: "Bearer secret-token" });
    const { source } = remoteSource(server, {
      headers: { Authorization: "Bearer secret-token", "X-Tenant": "acme" },
    });
    const registry = new ToolRegistry(await source.start());
    expect(registry.names()).toEqual([
      "remote__add",
      "remote__echo",
      "remote__fail",
      "remote__list_roots",
      "remote__malformed_result",
      "remote__purge",
      "remote__record",
      "remote__request_meta",
      "remote__sample",
      "remote__slow",
      "remote__vanish",
      "remote__vanish_read_only",
    ]);
    const purge = registry.get("remote__purge")!.manifest;
    expect(purge.source).toEqual({ kind: "mcp", server: "remote", tool: "purge" });
    expect(purge.annotations).toEqual({
      title: "Purge",
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(registry.get("remote__echo")!.manifest.annotations).toEqual({ readOnlyHint: true });
    expect(registry.get("remote__add")!.manifest.annotations).toBeNull();
    expect(purge.input_schema).toMatchObject({ type: "object", required: ["scope"] });

    const echoed = await pipeline(callContext(registry, "remote__echo", { text: "over http" }));
    expect(echoed).toMatchObject({ status: "ok", content: "over http", executed: true });
    expect(server.requests.length).toBeGreaterThan(2);
    for (const request of server.requests) {
      expect(request.headers.authorization).toBe("Bearer secret-token");
      expect(request.headers["x-tenant"]).toBe("acme");
    }
    expect(source.health()).toMatchObject({
      server: "remote",
      type: "http",
      state: "healthy",
      lastError: null,
    });
  });

  it("reports tool errors and invalid input as failed results; invalid input never reaches the server", async () => {
    const server = await testServer();
    const { source } = remoteSource(server);
    const registry = new ToolRegistry(await source.start());
    const failed = await pipeline(callContext(registry, "remote__fail", { message: "quota exceeded" }));
    expect(failed).toMatchObject({
      status: "failed",
      error_code: "TOOL_EXECUTION_FAILED",
      content: "(tool failed: quota exceeded)",
    });
    const invalid = await pipeline(callContext(registry, "remote__record", { value: 42 }));
    expect(invalid).toMatchObject({ status: "failed", error_code: "TOOL_INPUT_INVALID", executed: false });
    expect(server.executedCalls.map((call) => call.tool)).toEqual(["fail"]);
    expect(source.health().state).toBe("healthy");
  });

  it("exposes only the tools toolsAllowed lets through and toolsDenied does not stop", async () => {
    const server = await testServer();
    const { source } = remoteSource(server, {
      toolsAllowed: ["e*", "remote__add", "p?rge", "record"],
      toolsDenied: ["purge"],
    });
    const registry = new ToolRegistry(await source.start());
    expect(registry.names()).toEqual(["remote__add", "remote__echo", "remote__record"]);
  });

  it("fails to start with MCP_SERVER_FAILED, never an empty list, when no tool passes the filters", async () => {
    const server = await testServer();
    const { source } = remoteSource(server, { toolsAllowed: ["nothing_*"] });
    const error = await startFailure(source);
    expect(error.code).toBe("MCP_SERVER_FAILED");
    expect(error.details).toMatchObject({
      server: "remote",
      phase: "list_tools",
      toolsAllowed: ["nothing_*"],
    });
    expect(error.details.listed).toContain("echo");
    expect(source.health().state).toBe("unavailable");
    expect(server.sessionCount()).toBe(0);
  });

  it("ends a request past requestTimeout with TOOL_TIMEOUT as data; the next call succeeds", async () => {
    const server = await testServer();
    // The bound applies to the next call too: long enough for an echo on loopback on a busy machine (100 ms was
    // not, with two test files running at once), far below the slow call's minute.
    const { source } = remoteSource(server, { requestTimeout: 2_000 });
    const registry = new ToolRegistry(await source.start());
    const slow = await pipeline(callContext(registry, "remote__slow", { ms: 60_000 }));
    expect(slow).toMatchObject({ status: "failed", error_code: "TOOL_TIMEOUT", executed: true });
    expect(source.health()).toMatchObject({
      state: "degraded",
      lastError: { code: "TOOL_TIMEOUT", kind: "timeout" },
    });
    const echoed = await pipeline(callContext(registry, "remote__echo", { text: "still here" }));
    expect(echoed).toMatchObject({ status: "ok", content: "still here" });
    expect(source.health().state).toBe("healthy");
  });

  it("re-initialises a session the server has forgotten (HTTP 404) and runs the call exactly once", async () => {
    const server = await testServer();
    const { source, environment, changes } = remoteSource(server);
    const registry = new ToolRegistry(await source.start());
    await server.forgetSessions();

    const recorded = await pipeline(callContext(registry, "remote__record", { value: "once" }));
    expect(recorded).toMatchObject({ status: "ok", content: "recorded once" });
    expect(server.executedCalls).toEqual([{ tool: "record", arguments: { value: "once" } }]);
    const initializations = server.requests.filter((request) => request.rpcMethod === "initialize");
    expect(initializations).toHaveLength(2);
    expect(initializations[1]!.sessionId).toBeNull();
    const forgotten = server.requests.find((request) => request.rpcMethod === "tools/call");
    expect(forgotten?.sessionId).toBe("session-1-1");
    expect(source.health()).toMatchObject({
      state: "healthy",
      reconnections: 1,
      lastError: { code: "MCP_SERVER_FAILED", kind: "session_expired", httpStatus: 404 },
    });
    expect(statesOf(changes)).toEqual(["healthy", "degraded", "healthy"]);
    // A forgotten session is not a failing server: the new one is opened at once, without backoff.
    expect(environment.slept).toEqual([]);
  });

  it("carries on after the server restarts on the same port", async () => {
    const server = await testServer();
    const { source } = remoteSource(server);
    const registry = new ToolRegistry(await source.start());
    await server.restart();
    const echoed = await pipeline(callContext(registry, "remote__echo", { text: "after restart" }));
    expect(echoed).toMatchObject({ status: "ok", content: "after restart" });
    expect(source.health()).toMatchObject({ state: "healthy", reconnections: 1 });
    expect(server.requests.filter((request) => request.rpcMethod === "initialize")).toHaveLength(2);
  });

  it("never repeats a call lost in flight, unless the tool is declared read-only or idempotent", async () => {
    const server = await testServer();
    const { source } = remoteSource(server);
    const registry = new ToolRegistry(await source.start());

    const lost = await pipeline(callContext(registry, "remote__vanish"));
    expect(lost).toMatchObject({ status: "failed", error_code: "MCP_SERVER_FAILED", executed: true });
    expect(lost.content).toContain("may or may not have run");
    expect(server.executedCalls.map((call) => call.tool)).toEqual(["vanish"]);
    expect(source.health()).toMatchObject({ state: "degraded", lastError: { kind: "connection_lost" } });

    const repeated = await pipeline(callContext(registry, "remote__vanish_read_only"));
    expect(repeated).toMatchObject({ status: "failed", error_code: "MCP_SERVER_FAILED" });
    // Repeated once on a new session, and not again.
    expect(server.executedCalls.map((call) => call.tool)).toEqual([
      "vanish",
      "vanish_read_only",
      "vanish_read_only",
    ]);

    const echoed = await pipeline(callContext(registry, "remote__echo", { text: "recovered" }));
    expect(echoed).toMatchObject({ status: "ok", content: "recovered" });
    expect(source.health()).toMatchObject({ state: "healthy" });
  });

  it("repeats a call lost in flight by the class configuration gives the tool, not by the server's hints", async () => {
    const server = await testServer();
    const { source } = remoteSource(server);
    const registry = new ToolRegistry(
      configureToolIdempotency(await source.start(), {
        destructiveTools: ["remote__vanish_read_only"],
        idempotentTools: ["remote__vanish"],
      }),
    );

    // Annotated read-only by the server, destructive by configuration: sent once, never again.
    const destructive = await pipeline(callContext(registry, "remote__vanish_read_only"));
    expect(destructive).toMatchObject({ status: "failed", error_code: "MCP_SERVER_FAILED", executed: true });
    expect(server.executedCalls.map((call) => call.tool)).toEqual(["vanish_read_only"]);

    // Without hints on the server, idempotent by configuration: repeated once on a new session.
    const idempotent = await pipeline(callContext(registry, "remote__vanish"));
    expect(idempotent).toMatchObject({ status: "failed", error_code: "MCP_SERVER_FAILED" });
    expect(server.executedCalls.map((call) => call.tool)).toEqual(["vanish_read_only", "vanish", "vanish"]);
  });

  it("marks a server that went away unavailable after backing off, and fails its calls as data", async () => {
    const server = await testServer();
    const { source, environment, changes } = remoteSource(server);
    const registry = new ToolRegistry(await source.start());
    await server.close();

    const first = await pipeline(callContext(registry, "remote__echo", { text: "anyone?" }));
    expect(first).toMatchObject({ status: "failed", error_code: "MCP_SERVER_FAILED", executed: true });
    expect(first.content).toContain("MCP server 'remote' is unavailable");
    // Three attempts: at once, then after 100 ms, then after 200 ms (doubling, capped at maxDelay).
    expect(environment.slept).toEqual([100, 200]);
    expect(source.health()).toMatchObject({
      state: "unavailable",
      lastError: { code: "MCP_SERVER_FAILED", kind: "unreachable", systemCode: "ECONNREFUSED" },
    });
    expect(statesOf(changes)).toEqual(["healthy", "degraded", "unavailable"]);

    // While the server rests, calls fail at once, without new attempts.
    const second = await pipeline(callContext(registry, "remote__add", { a: 1, b: 2 }));
    expect(second).toMatchObject({ status: "failed", error_code: "MCP_SERVER_FAILED" });
    expect(environment.slept).toEqual([100, 200]);

    // Once maxDelay has passed, the next call tries a new round.
    environment.advance(1000);
    const third = await pipeline(callContext(registry, "remote__add", { a: 1, b: 2 }));
    expect(third).toMatchObject({ status: "failed", error_code: "MCP_SERVER_FAILED" });
    expect(environment.slept).toEqual([100, 200, 100, 200]);
    expect(unhandled).toEqual([]);
  });

  it("fails to start with MCP_SERVER_FAILED after its attempts when nothing listens", async () => {
    const server = await testServer();
    await server.close();
    const { source, environment } = remoteSource(server);
    const error = await startFailure(source);
    expect(error.code).toBe("MCP_SERVER_FAILED");
    expect(error.details).toMatchObject({
      server: "remote",
      type: "http",
      phase: "start",
      kind: "unreachable",
      systemCode: "ECONNREFUSED",
      attempts: 3,
      url: server.streamableHttpUrl,
    });
    expect(environment.slept).toEqual([100, 200]);
    expect(source.health()).toMatchObject({ state: "unavailable", lastError: { kind: "unreachable" } });
  });

  it("does not retry a start refused with HTTP 401", async () => {
    const server = await testServer({ requiredAuthorization: "Bearer right" });
    const { source, environment } = remoteSource(server, { headers: { Authorization: "Bearer wrong" } });
    const error = await startFailure(source);
    expect(error.code).toBe("MCP_SERVER_FAILED");
    expect(error.details).toMatchObject({
      phase: "start",
      kind: "http_status",
      httpStatus: 401,
      attempts: 1,
    });
    expect(environment.slept).toEqual([]);
    // Credentials never appear in what is reported.
    expect(JSON.stringify(error.details)).not.toContain("Bearer");
  });

  it("ends its session on close, and calls afterwards fail as data", async () => {
    const server = await testServer();
    const { source } = remoteSource(server);
    const registry = new ToolRegistry(await source.start());
    expect(server.sessionCount()).toBe(1);
    await source.close();
    expect(server.requests.at(-1)).toMatchObject({ method: "DELETE", sessionId: "session-1-1" });
    expect(server.sessionCount()).toBe(0);
    expect(source.health().state).toBe("unavailable");
    const afterClose = await pipeline(callContext(registry, "remote__echo", { text: "x" }));
    expect(afterClose).toMatchObject({ status: "failed", error_code: "MCP_SERVER_FAILED" });
  });

  it("stops waiting for a reconnection when the call is interrupted, and close() ends the round", async () => {
    const server = await testServer();
    const interrupt = new AbortController();
    const sleeps: number[] = [];
    // Waiting between attempts is where the interrupt lands: the wait lasts until the source is closed.
    const environment = {
      ...deterministicEnvironment(),
      sleep(milliseconds: number, signal?: AbortSignal) {
        sleeps.push(milliseconds);
        interrupt.abort();
        return new Promise<void>((resolve) =>
          signal?.addEventListener("abort", () => resolve(), { once: true }),
        );
      },
    };
    const source = createMcpSource(
      "remote",
      {
        type: "http",
        url: server.streamableHttpUrl,
        reconnect: { attempts: 3, initialDelay: 60_000, maxDelay: 60_000 },
      },
      { environment },
    );
    track(source);
    const registry = new ToolRegistry(await source.start());
    await server.close();
    const result = await pipeline(
      callContext(registry, "remote__echo", { text: "x" }, { signal: interrupt.signal }),
    );
    expect(result).toMatchObject({ status: "failed", error_code: "INTERRUPTED", executed: true });
    expect(sleeps).toEqual([60_000]);
    expect(source.health().state).toBe("degraded");
    await source.close();
    expect(source.health().state).toBe("unavailable");
    expect(sleeps).toEqual([60_000]);
  });
});
