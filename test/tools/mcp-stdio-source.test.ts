import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { mcpTestServerLaunch } from "../../src/testing/mcp-test-server-launch.js";
import { createDefaultPipeline } from "../../src/tools/create-default-pipeline.js";
import type { McpToolSource } from "../../src/tools/sources/mcp-source.js";
import {
  createMcpStdioSource,
  type McpStdioSourceOptions,
} from "../../src/tools/sources/mcp-stdio-source.js";
import type { RegisteredTool, ToolSource } from "../../src/tools/tool-definition.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { callContext, testPolicy } from "./tool-call-fixture.js";

const launch = mcpTestServerLaunch();
const scratch = mkdtempSync(join(tmpdir(), "charter-mcp-test-"));
const pipeline = createDefaultPipeline();
const openSources: ToolSource[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

function testServer(overrides: Partial<McpStdioSourceOptions> = {}): McpToolSource {
  const source = createMcpStdioSource({
    serverName: "test",
    command: launch.command,
    args: launch.args,
    startTimeoutMs: 20_000,
    ...overrides,
  });
  openSources.push(source);
  return source;
}

async function startFailure(source: ToolSource): Promise<CharterError> {
  const error = await source.start().then(
    () => null,
    (rejection: unknown) => rejection,
  );
  if (!CharterError.isInstance(error)) throw new Error(`expected a CharterError, got ${String(error)}`);
  return error;
}

function recordLines(file: string): { tool: string; key: string; value: string; pid: number }[] {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(() => {
  process.on("unhandledRejection", onUnhandled);
});

afterEach(async () => {
  await Promise.all(openSources.splice(0).map((source) => source.close()));
});

afterAll(() => {
  process.off("unhandledRejection", onUnhandled);
  rmSync(scratch, { recursive: true, force: true });
  expect(unhandled).toEqual([]);
});

describe("an MCP server over stdio", () => {
  let tools: readonly RegisteredTool[] = [];
  let registry: ToolRegistry;
  const recordFile = join(scratch, "records.jsonl");

  beforeAll(async () => {
    const source = createMcpStdioSource({
      serverName: "test",
      command: launch.command,
      args: launch.args,
      env: { CHARTER_TEST_RECORD_FILE: recordFile },
    });
    tools = await source.start();
    registry = new ToolRegistry(tools);
    // Closed after the whole group, not after each test.
    return () => source.close();
  });

  it("lists every tool as <server>__<tool>, with its schema and annotations", () => {
    // `long_job` is listed by the server too, but only as a task: it is not offered.
    expect(registry.names()).toEqual([
      "test__add",
      "test__big_output",
      "test__blob_resource",
      "test__count_records",
      "test__crash",
      "test__deploy",
      "test__echo",
      "test__fail",
      "test__list_roots",
      "test__malformed_result",
      "test__record",
      "test__record_slowly",
      "test__record_until_released",
      "test__recording",
      "test__request_meta",
      "test__sample",
      "test__slow",
      "test__snapshot",
    ]);
    const echo = registry.get("test__echo")!.manifest;
    expect(echo.source).toEqual({ kind: "mcp", server: "test", tool: "echo" });
    expect(echo.description).toBe("Returns its text unchanged.");
    expect(echo.input_schema).toMatchObject({ type: "object", required: ["text"] });
    expect(echo.annotations).toEqual({ readOnlyHint: true });
    expect(registry.get("test__record")!.manifest.annotations).toEqual({
      destructiveHint: false,
      idempotentHint: false,
    });
    expect(registry.get("test__crash")!.manifest.annotations).toBeNull();
    expect(Object.isFrozen(echo.input_schema)).toBe(true);
  });

  it("calls tools and returns their text", async () => {
    const echoed = await pipeline(callContext(registry, "test__echo", { text: "hello there" }));
    expect(echoed).toMatchObject({ status: "ok", content: "hello there", executed: true, error_code: null });
    expect(echoed.source).toEqual({ kind: "mcp", server: "test", tool: "echo" });
    const sum = await pipeline(callContext(registry, "test__add", { a: 2, b: 3.5 }));
    expect(sum).toMatchObject({ status: "ok", content: "5.5" });
  });

  it("turns a tool's isError into a failed result with the tool's text", async () => {
    const direct = await registry
      .get("test__fail")!
      .execute(
        { message: "disk quota exceeded" },
        { signal: new AbortController().signal, runId: "run", callId: "call" },
      );
    expect(direct).toEqual({ text: "disk quota exceeded", isError: true });
    const result = await pipeline(callContext(registry, "test__fail", { message: "disk quota exceeded" }));
    expect(result).toMatchObject({
      status: "failed",
      error_code: "TOOL_EXECUTION_FAILED",
      content: "(tool failed: disk quota exceeded)",
      executed: true,
    });
  });

  it("never runs a tool whose input is invalid: the side effect happens only for the valid call", async () => {
    const invalid = await pipeline(callContext(registry, "test__record", { key: "k1" }));
    expect(invalid).toMatchObject({ status: "failed", error_code: "TOOL_INPUT_INVALID", executed: false });
    const wrongType = await pipeline(callContext(registry, "test__record", { key: "k1", value: 42 }));
    expect(wrongType).toMatchObject({ status: "failed", error_code: "TOOL_INPUT_INVALID", executed: false });
    expect(recordLines(recordFile)).toEqual([]);

    const valid = await pipeline(callContext(registry, "test__record", { key: "k1", value: "v1" }));
    expect(valid).toMatchObject({ status: "ok", content: "recorded", executed: true });
    const lines = recordLines(recordFile);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ tool: "record", key: "k1", value: "v1" });
  });

  it("times a slow tool out with (tool failed: timeout), and the server keeps serving", async () => {
    const result = await pipeline(
      callContext(registry, "test__slow", { ms: 60_000 }, { policy: testPolicy({ tool_timeout_ms: 150 }) }),
    );
    expect(result).toMatchObject({
      status: "failed",
      error_code: "TOOL_TIMEOUT",
      content: "(tool failed: timeout)",
      executed: true,
    });
    const after = await pipeline(callContext(registry, "test__echo", { text: "still here" }));
    expect(after).toMatchObject({ status: "ok", content: "still here" });
  });

  it("cuts an oversized output to the budget, marked, when there is no output store", async () => {
    const result = await pipeline(
      callContext(registry, "test__big_output", { lines: 100, width: 50 }, { outputStore: null }),
    );
    expect(result.status).toBe("ok");
    expect(result.handle).toBeNull();
    expect(Buffer.byteLength(result.content)).toBeLessThanOrEqual(1000);
    expect(result.content.endsWith("…[truncated]")).toBe(true);
  });
});

describe("MCP server lifecycle", () => {
  it("follows pagination cursors and lists the same tools", async () => {
    const paged = await testServer({ env: { CHARTER_TEST_MCP_PAGE_SIZE: "2" } }).start();
    const single = await testServer().start();
    expect(paged.map((tool) => tool.manifest)).toEqual(single.map((tool) => tool.manifest));
    expect(paged).toHaveLength(18);
  });

  it("rejects with MCP_SERVER_FAILED (phase start, exit code, stderr) when the server exits before connecting", async () => {
    const error = await startFailure(testServer({ env: { CHARTER_TEST_MCP_FAIL_START: "1" } }));
    expect(error.code).toBe("MCP_SERVER_FAILED");
    expect(error.details).toMatchObject({ server: "test", phase: "start", exitCode: 1 });
    expect(String(error.details.stderrTail)).toContain("failing on purpose");
  });

  it("rejects with phase list_tools when the server cannot list its tools", async () => {
    const error = await startFailure(testServer({ env: { CHARTER_TEST_MCP_FAIL_LIST: "1" } }));
    expect(error.code).toBe("MCP_SERVER_FAILED");
    expect(error.details).toMatchObject({ server: "test", phase: "list_tools" });
  });

  it("rejects with phase start when the server never answers within the start timeout", async () => {
    const error = await startFailure(
      testServer({ env: { CHARTER_TEST_MCP_SILENT: "1" }, startTimeoutMs: 300 }),
    );
    expect(error.code).toBe("MCP_SERVER_FAILED");
    expect(error.details).toMatchObject({ server: "test", phase: "start" });
  });

  it("rejects with phase start when the command does not exist", async () => {
    const error = await startFailure(
      testServer({ command: join(scratch, "no-such-server"), args: [], serverName: "ghost" }),
    );
    expect(error.code).toBe("MCP_SERVER_FAILED");
    expect(error.details).toMatchObject({ server: "ghost", phase: "start" });
  });

  it("reports a server that crashes mid-run as failed results and an unavailable server, without unhandled rejections", async () => {
    const source = testServer();
    const registry = new ToolRegistry(await source.start());
    expect(source.health()).toMatchObject({
      server: "test",
      type: "stdio",
      state: "healthy",
      lastError: null,
    });
    const crashed = await pipeline(callContext(registry, "test__crash"));
    expect(crashed).toMatchObject({ status: "failed", error_code: "MCP_SERVER_FAILED", executed: true });
    expect(crashed.content).toContain("exited with code 1");
    const afterwards = await pipeline(callContext(registry, "test__echo", { text: "anyone?" }));
    expect(afterwards).toMatchObject({ status: "failed", error_code: "MCP_SERVER_FAILED", executed: true });
    expect(afterwards.content).toContain("is not running");
    expect(source.health()).toMatchObject({
      state: "unavailable",
      lastError: { code: "MCP_SERVER_FAILED", kind: "process_exited", exitCode: 1 },
    });
    expect(unhandled).toEqual([]);
  });

  it("ends a server that ignores SIGTERM and stdin closing when the source closes", async () => {
    const pidFile = join(scratch, "stubborn.pid");
    const source = testServer({
      env: { CHARTER_TEST_MCP_STUBBORN: "1", CHARTER_TEST_MCP_PID_FILE: pidFile },
    });
    await source.start();
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(isRunning(pid)).toBe(true);
    await source.close();
    expect(isRunning(pid)).toBe(false);
  });

  it("terminates the server process on close", async () => {
    const recordFile = join(scratch, "close-records.jsonl");
    writeFileSync(recordFile, "");
    const source = testServer({ env: { CHARTER_TEST_RECORD_FILE: recordFile } });
    const registry = new ToolRegistry(await source.start());
    await pipeline(callContext(registry, "test__record", { key: "who", value: "me" }));
    const [line] = recordLines(recordFile);
    expect(line).toBeDefined();
    expect(isRunning(line!.pid)).toBe(true);
    await source.close();
    expect(isRunning(line!.pid)).toBe(false);
    const afterClose = await pipeline(callContext(registry, "test__echo", { text: "x" }));
    expect(afterClose).toMatchObject({ status: "failed", error_code: "MCP_SERVER_FAILED" });
  });
});
