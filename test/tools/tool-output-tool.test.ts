import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { mcpTestServerLaunch } from "../../src/testing/mcp-test-server-launch.js";
import { createToolOutputTool } from "../../src/tools/builtin/tool-output-tool.js";
import { createDefaultPipeline } from "../../src/tools/create-default-pipeline.js";
import { createMcpStdioSource } from "../../src/tools/sources/mcp-stdio-source.js";
import { createToolOutputStore } from "../../src/tools/tool-output-store.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { callContext, testPolicy } from "./tool-call-fixture.js";

const scratch = mkdtempSync(join(tmpdir(), "charter-tool-output-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const pipeline = createDefaultPipeline();
const numbered = Array.from({ length: 500 }, (_, index) => `line ${index + 1}`).join("\n");

function setup(runHash: string, options: { maxLines?: number; maxBytes?: number } = {}) {
  const store = createToolOutputStore({ runHash, baseDirectory: scratch });
  const registry = new ToolRegistry([createToolOutputTool({ store, ...options })]);
  const call = (args: Record<string, unknown>) => pipeline(callContext(registry, "tool_output", args));
  return { store, registry, call };
}

describe("the tool_output built-in", () => {
  it("is a read-only built-in whose schema requires a handle and a mode", () => {
    const { registry } = setup("manifest");
    const manifest = registry.get("tool_output")!.manifest;
    expect(manifest.source).toEqual({ kind: "builtin", server: null, tool: "tool_output" });
    expect(manifest.input_schema).toMatchObject({
      required: ["handle", "mode"],
      additionalProperties: false,
    });
    expect(manifest.annotations).toEqual({ readOnlyHint: true });
  });

  it("reads a line range, at most maxLines lines, saying where to continue", async () => {
    const { store, call } = setup("reads", { maxLines: 10 });
    const { handle } = await store.store(numbered, { toolName: "t", callId: "c" });
    const exact = await call({ handle, mode: "read", start_line: 5, end_line: 7 });
    expect(exact.status).toBe("ok");
    expect(exact.content).toBe(`[${handle}: lines 5-7 of 500]\nline 5\nline 6\nline 7`);

    const bounded = await call({ handle, mode: "read", start_line: 20 });
    const lines = bounded.content.split("\n");
    expect(lines[0]).toBe(`[${handle}: lines 20-29 of 500]`);
    expect(lines.slice(1, 11)).toEqual(Array.from({ length: 10 }, (_, index) => `line ${20 + index}`));
    expect(lines[11]).toContain("start_line=30");
  });

  it("keeps an answer within maxBytes, cutting a line too long to show whole", async () => {
    const { store, call } = setup("bytes", { maxBytes: 400 });
    const { handle } = await store.store(`${"w".repeat(2000)}\nshort\n`, { toolName: "t", callId: "c" });
    const result = await call({ handle, mode: "read" });
    expect(Buffer.byteLength(result.content)).toBeLessThanOrEqual(400);
    expect(result.content).toContain("[line cut]");
    expect(result.content).toContain("start_line=2");
  });

  it("greps literally, reporting how many lines matched and which", async () => {
    const { store, call } = setup("greps");
    const { handle } = await store.store(numbered, { toolName: "t", callId: "c" });
    const result = await call({ handle, mode: "grep", pattern: "line 42", max_matches: 3 });
    expect(result.content.split("\n")).toEqual([
      `[${handle}: 11 of 500 lines contain "line 42"]`,
      "42: line 42",
      "420: line 420",
      "421: line 421",
      "[truncated: showing 3 of 11 matches; narrow the pattern or read a line range]",
    ]);
  });

  it("fails cleanly on a bad handle, a missing pattern or a wrong mode", async () => {
    const { call } = setup("failures");
    expect(await call({ handle: "../../etc/passwd", mode: "read" })).toMatchObject({
      status: "failed",
      error_code: "TOOL_OUTPUT_HANDLE_INVALID",
    });
    expect(await call({ handle: "out-7", mode: "read" })).toMatchObject({
      error_code: "TOOL_OUTPUT_HANDLE_INVALID",
    });
    expect(await call({ handle: "out-1", mode: "grep" })).toMatchObject({ error_code: "TOOL_INPUT_INVALID" });
    expect(await call({ handle: "out-1", mode: "delete" })).toMatchObject({
      error_code: "TOOL_INPUT_INVALID",
    });
  });

  it("reads back an oversized MCP output end to end: stored by the pipeline, read through the handle", async () => {
    const launch = mcpTestServerLaunch();
    const source = createMcpStdioSource({ serverName: "test", command: launch.command, args: launch.args });
    try {
      const store = createToolOutputStore({ runHash: "endtoend", baseDirectory: scratch });
      const registry = new ToolRegistry([...(await source.start()), createToolOutputTool({ store })]);
      const policy = testPolicy({
        tool_output_budget: { max_bytes_per_call: 4096, truncation_marker: "[cut]", summarizer_model: null },
      });
      const big = await pipeline(
        callContext(registry, "test__big_output", { lines: 1000, width: 40 }, { policy, outputStore: store }),
      );
      const message = JSON.parse(big.content);
      expect(message).toMatchObject({ handle: big.handle, bytes: 1000 * 41 - 1, lines: 1000 });

      const read = await pipeline(
        callContext(registry, "tool_output", {
          handle: message.handle,
          mode: "read",
          start_line: 500,
          end_line: 501,
        }),
      );
      expect(read.content.split("\n").slice(1)).toEqual([
        `line 000500 ${"x".repeat(28)}`,
        `line 000501 ${"x".repeat(28)}`,
      ]);
      const found = await pipeline(
        callContext(registry, "tool_output", {
          handle: message.handle,
          mode: "grep",
          pattern: "line 000999",
        }),
      );
      expect(found.content).toContain(`999: line 000999`);
    } finally {
      await source.close();
    }
  });
});
