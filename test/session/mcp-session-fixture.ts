import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { mcpTestServerLaunch } from "../../src/testing/mcp-test-server-launch.js";
import type { McpToolSource } from "../../src/tools/sources/mcp-source.js";
import { createMcpStdioSource } from "../../src/tools/sources/mcp-stdio-source.js";
import type { RegisteredTool } from "../../src/tools/tool-definition.js";
import { call, runScripted, type ScriptedRunOptions } from "./session-harness.js";

/**
 * The MCP test server's tools as the model names them (`test__<tool>`), with the arguments a scripted call
 * sends. `record` and `record_slowly` append every execution to the record file: the side effect a test sees.
 */
export const mcpCall = {
  /** A tool with a side effect; executions read back as `record:<key>`. */
  record: (key: string) => call("test__record", { key, value: "v" }),
  /** A second, distinct side-effect tool (waits 0 ms); executions read back as `record_slowly:<key>`. */
  recordSlowly: (key: string) => call("test__record_slowly", { key, ms: 0 }),
  /** `lines` numbered lines (`line 000001 xxx...`), 80 characters wide. */
  bigOutput: (lines: number) => call("test__big_output", { lines }),
  /** Answers after an hour unless cancelled: a call that hangs. */
  hang: () => call("test__slow", { ms: 3_600_000 }),
} as const;

/**
 * One MCP test server process over stdio for the whole test file (started before its first test, closed
 * after its last): `run` is `runScripted` with that server's tools, and `executions` lists what the record
 * tools did during that run, read from the file the server process wrote.
 */
export function useMcpTestServer() {
  const directory = mkdtempSync(join(tmpdir(), "charter-session-mcp-"));
  const recordFile = join(directory, "records.jsonl");
  writeFileSync(recordFile, "");
  let source: McpToolSource | null = null;
  let tools: readonly RegisteredTool[] = [];

  beforeAll(async () => {
    const launch = mcpTestServerLaunch();
    source = createMcpStdioSource({
      serverName: "test",
      command: launch.command,
      args: launch.args,
      env: { CHARTER_TEST_RECORD_FILE: recordFile },
      startTimeoutMs: 20_000,
    });
    tools = await source.start();
  });
  afterAll(async () => {
    await source?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  function recordedExecutions(): string[] {
    return readFileSync(recordFile, "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => {
        const record = JSON.parse(line) as { tool: string; key: string };
        return `${record.tool}:${record.key}`;
      });
  }

  return {
    async run(options: Omit<ScriptedRunOptions, "tools">) {
      const before = recordedExecutions().length;
      const run = await runScripted({ ...options, tools });
      return { ...run, executions: recordedExecutions().slice(before) };
    },
  };
}
