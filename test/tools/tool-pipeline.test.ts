import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { composeToolPipeline } from "../../src/tools/compose-tool-pipeline.js";
import { createDefaultPipeline } from "../../src/tools/create-default-pipeline.js";
import { executionStage } from "../../src/tools/stages/execution-stage.js";
import { lookupStage } from "../../src/tools/stages/lookup-stage.js";
import type { RegisteredTool, ToolOutput } from "../../src/tools/tool-definition.js";
import { freezeToolResult, type ToolExecutionResult } from "../../src/tools/tool-execution-result.js";
import { createToolOutputStore } from "../../src/tools/tool-output-store.js";
import type { ToolStage } from "../../src/tools/tool-pipeline.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { anyObject, callContext, functionTool, ok, testPolicy } from "./tool-call-fixture.js";

const scratch = mkdtempSync(join(tmpdir(), "charter-pipeline-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const pipeline = createDefaultPipeline();

const counterSchema = {
  type: "object",
  properties: { count: { type: "integer", minimum: 0 }, label: { type: "string" } },
  required: ["count"],
  additionalProperties: false,
};

describe("lookupStage: an unknown tool is refused as data", () => {
  it("INV-TOOL-003 unknown tools return error: answers an unknown tool with TOOL_NOT_FOUND naming the available tools, and never throws", async () => {
    const registry = new ToolRegistry([
      functionTool("beta", anyObject, async () => ok("b")),
      functionTool("alpha", anyObject, async () => ok("a")),
    ]);
    const result = await pipeline(callContext(registry, "gamma", { x: 1 }));
    expect(result).toMatchObject({
      status: "failed",
      error_code: "TOOL_NOT_FOUND",
      content: "(tool failed: unknown tool 'gamma'; available: alpha, beta)",
      executed: false,
      tool_name: "gamma",
    });
    expect(result.source).toEqual({ kind: "unknown", server: null, tool: "gamma" });
  });
});

describe("inputValidationStage: invalid input never reaches the tool", () => {
  it("INV-TOOL-001 invalid inputs rejected: refuses invalid arguments, listing each problem with its path, without running the tool", async () => {
    const tool = functionTool("counter", counterSchema, async () => ok("counted"));
    const registry = new ToolRegistry([tool]);
    const result = await pipeline(callContext(registry, "counter", { count: -2, extra: true }));
    expect(result).toMatchObject({ status: "failed", error_code: "TOOL_INPUT_INVALID", executed: false });
    expect(result.content).toContain("/count");
    expect(result.content).toContain("'extra'");
    expect(tool.calls).toHaveLength(0);

    const valid = await pipeline(callContext(registry, "counter", { count: 2 }));
    expect(valid).toMatchObject({ status: "ok", content: "counted" });
    expect(tool.calls).toEqual([{ count: 2 }]);
  });

  it("compiles each tool's schema once, however often the tool is called", async () => {
    let schemaReads = 0;
    const tool = functionTool("counter", counterSchema, async () => ok("counted"));
    const counted: RegisteredTool = {
      manifest: {
        ...tool.manifest,
        get input_schema() {
          schemaReads++;
          return counterSchema;
        },
      },
      execute: tool.execute,
    };
    const registry = new ToolRegistry([counted]);
    for (const count of [1, -1, 2, 3]) await pipeline(callContext(registry, "counter", { count }));
    expect(schemaReads).toBe(1);
  });

  it("chooses the dialect from $schema: 2020-12 prefixItems and draft-07 tuple items both apply", async () => {
    const modern = functionTool(
      "modern",
      {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }] } },
      },
      async () => ok("modern"),
    );
    const classic = functionTool(
      "classic",
      {
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: { pair: { type: "array", items: [{ type: "string" }, { type: "number" }] } },
      },
      async () => ok("classic"),
    );
    const registry = new ToolRegistry([modern, classic]);
    for (const name of ["modern", "classic"]) {
      expect((await pipeline(callContext(registry, name, { pair: ["a", 1] }))).status).toBe("ok");
      const wrong = await pipeline(callContext(registry, name, { pair: [1, "a"] }));
      expect(wrong.error_code).toBe("TOOL_INPUT_INVALID");
    }
  });

  it("accepts schemas declaring an older dialect Ajv does not ship (draft-04)", async () => {
    const legacy = functionTool(
      "legacy",
      { $schema: "http://json-schema.org/draft-04/schema#", type: "object", required: ["id"] },
      async () => ok("legacy"),
    );
    const registry = new ToolRegistry([legacy]);
    expect((await pipeline(callContext(registry, "legacy", { id: 1 }))).status).toBe("ok");
    expect((await pipeline(callContext(registry, "legacy", {}))).error_code).toBe("TOOL_INPUT_INVALID");
  });

  it("refuses calls to a tool whose own schema cannot be compiled, without running it", async () => {
    const broken = functionTool(
      "broken",
      { type: "object", properties: { a: { type: "nonsense" } } },
      async () => ok("ran"),
    );
    const registry = new ToolRegistry([broken]);
    const result = await pipeline(callContext(registry, "broken", { a: 1 }));
    expect(result).toMatchObject({ status: "failed", error_code: "TOOL_INPUT_INVALID", executed: false });
    expect(broken.calls).toHaveLength(0);
  });
});

describe("policyStage", () => {
  const registry = () =>
    new ToolRegistry([
      functionTool("read", anyObject, async () => ok("read")),
      functionTool("write", anyObject, async () => ok("written")),
      functionTool("tool_output", anyObject, async () => ok("builtin"), "builtin"),
    ]);

  it("refuses every call under tool_policy=forbidden with CONTRACT_VIOLATION, without running it", async () => {
    const tools = registry();
    const result = await pipeline(
      callContext(tools, "read", {}, { policy: testPolicy({ tool_policy: "forbidden" }) }),
    );
    expect(result).toMatchObject({ status: "failed", error_code: "CONTRACT_VIOLATION", executed: false });
    expect((tools.get("read") as ReturnType<typeof functionTool>).calls).toHaveLength(0);
  });

  it("refuses tools outside allowed_tools with TOOL_NOT_ALLOWED, but always allows built-ins", async () => {
    const tools = registry();
    const policy = testPolicy({ allowed_tools: ["read"] });
    expect((await pipeline(callContext(tools, "read", {}, { policy }))).status).toBe("ok");
    const refused = await pipeline(callContext(tools, "write", {}, { policy }));
    expect(refused).toMatchObject({ status: "failed", error_code: "TOOL_NOT_ALLOWED", executed: false });
    expect((await pipeline(callContext(tools, "tool_output", {}, { policy }))).status).toBe("ok");
  });

  it("refuses a [previous, this] pair listed in cycle_forbid with CONTRACT_VIOLATION", async () => {
    const tools = registry();
    const policy = testPolicy({ cycle_forbid: [["write", "write"]] });
    const repeated = await pipeline(callContext(tools, "write", {}, { policy, previousToolName: "write" }));
    expect(repeated).toMatchObject({ status: "failed", error_code: "CONTRACT_VIOLATION", executed: false });
    const afterRead = await pipeline(callContext(tools, "write", {}, { policy, previousToolName: "read" }));
    expect(afterRead.status).toBe("ok");
    const first = await pipeline(callContext(tools, "write", {}, { policy, previousToolName: null }));
    expect(first.status).toBe("ok");
  });
});

describe("executionStage", () => {
  it("times out with (tool failed: timeout) and aborts the tool's signal", async () => {
    let seenSignal: AbortSignal | null = null;
    const waiting = functionTool("waits", anyObject, (_input, context) => {
      seenSignal = context.signal;
      return new Promise<ToolOutput>((resolve) => {
        context.signal.addEventListener("abort", () => resolve(ok("too late")));
      });
    });
    const registry = new ToolRegistry([waiting]);
    const result = await pipeline(
      callContext(registry, "waits", {}, { policy: testPolicy({ tool_timeout_ms: 20 }) }),
    );
    expect(result).toMatchObject({
      status: "failed",
      error_code: "TOOL_TIMEOUT",
      content: "(tool failed: timeout)",
      executed: true,
    });
    const signal = seenSignal as AbortSignal | null;
    expect(signal?.aborted).toBe(true);
    expect(CharterError.isInstance(signal?.reason) && signal.reason.code).toBe("TOOL_TIMEOUT");
  });

  it("stops waiting for a tool that ignores its signal", async () => {
    const stubborn = functionTool("stubborn", anyObject, () => new Promise<ToolOutput>(() => {}));
    const registry = new ToolRegistry([stubborn]);
    const result = await pipeline(
      callContext(registry, "stubborn", {}, { policy: testPolicy({ tool_timeout_ms: 20 }) }),
    );
    expect(result).toMatchObject({ status: "failed", error_code: "TOOL_TIMEOUT" });
  });

  it("turns a thrown error into TOOL_EXECUTION_FAILED with its reason, and keeps a CharterError's code", async () => {
    const registry = new ToolRegistry([
      functionTool("throws", anyObject, async () => {
        throw new Error("disk on fire");
      }),
      functionTool("throws_sync", anyObject, () => {
        throw new Error("sync failure");
      }),
      functionTool("typed", anyObject, async () => {
        throw new CharterError("TOOL_OUTPUT_HANDLE_INVALID", "bad handle");
      }),
    ]);
    expect(await pipeline(callContext(registry, "throws"))).toMatchObject({
      status: "failed",
      error_code: "TOOL_EXECUTION_FAILED",
      content: "(tool failed: disk on fire)",
      executed: true,
    });
    expect(await pipeline(callContext(registry, "throws_sync"))).toMatchObject({
      error_code: "TOOL_EXECUTION_FAILED",
      content: "(tool failed: sync failure)",
    });
    expect((await pipeline(callContext(registry, "typed"))).error_code).toBe("TOOL_OUTPUT_HANDLE_INVALID");
  });

  it("turns a tool-reported error into a failed result with the tool's text", async () => {
    const registry = new ToolRegistry([
      functionTool("reports", anyObject, async () => ({ text: "no such file", isError: true })),
    ]);
    expect(await pipeline(callContext(registry, "reports"))).toMatchObject({
      status: "failed",
      error_code: "TOOL_EXECUTION_FAILED",
      content: "(tool failed: no such file)",
    });
  });

  it("refuses a malformed output envelope with TOOL_RESULT_INVALID", async () => {
    const registry = new ToolRegistry([
      functionTool("malformed", anyObject, async () => ({ text: 42 }) as unknown as ToolOutput),
    ]);
    expect(await pipeline(callContext(registry, "malformed"))).toMatchObject({
      status: "failed",
      error_code: "TOOL_RESULT_INVALID",
      executed: true,
    });
  });

  it("interrupts a running tool when the run's signal aborts, and does not start one after", async () => {
    const run = new AbortController();
    let toolSignal: AbortSignal | null = null;
    const registry = new ToolRegistry([
      functionTool("long", anyObject, (_input, context) => {
        toolSignal = context.signal;
        run.abort();
        return new Promise<ToolOutput>(() => {});
      }),
    ]);
    const result = await pipeline(callContext(registry, "long", {}, { signal: run.signal }));
    expect(result).toMatchObject({ status: "failed", error_code: "INTERRUPTED", executed: true });
    expect((toolSignal as AbortSignal | null)?.aborted).toBe(true);

    const tool = registry.get("long") as ReturnType<typeof functionTool>;
    const before = tool.calls.length;
    const after = await pipeline(callContext(registry, "long", {}, { signal: run.signal }));
    expect(after).toMatchObject({ status: "failed", error_code: "INTERRUPTED", executed: false });
    expect(tool.calls).toHaveLength(before);
  });
});

describe("observationStage", () => {
  const policy = testPolicy({
    tool_output_budget: { max_bytes_per_call: 100, truncation_marker: "[cut]", summarizer_model: null },
  });
  const big = Array.from({ length: 20 }, (_, index) => `row ${index + 1} ${"é".repeat(5)}`).join("\n");

  it("stores an oversized output behind a handle and shows the handle message", async () => {
    const store = createToolOutputStore({
      runHash: "observe1",
      baseDirectory: scratch,
      countTokens: () => 77,
    });
    const registry = new ToolRegistry([functionTool("big", anyObject, async () => ok(big))]);
    const result = await pipeline(callContext(registry, "big", {}, { policy, outputStore: store }));
    const bytes = Buffer.byteLength(big);
    expect(result.status).toBe("ok");
    expect(result.handle).toBe("out-1");
    expect(JSON.parse(result.content)).toEqual({
      handle: "out-1",
      reason: `tool output exceeded toolResponseMaxBytes (${bytes} bytes > 100)`,
      bytes,
      lines: 20,
      tokens: 77,
      hint: "call tool_output with this handle to read lines or grep",
    });
    expect(readFileSync(join(store.directory, "out-1.txt"), "utf8")).toBe(big);
  });

  it("leaves outputs within the budget untouched", async () => {
    const store = createToolOutputStore({ runHash: "observe2", baseDirectory: scratch });
    const registry = new ToolRegistry([functionTool("small", anyObject, async () => ok("x".repeat(100)))]);
    const result = await pipeline(callContext(registry, "small", {}, { policy, outputStore: store }));
    expect(result).toMatchObject({ status: "ok", content: "x".repeat(100), handle: null });
  });

  it("cuts an oversized output to the budget with the truncation marker when there is no store", async () => {
    const registry = new ToolRegistry([functionTool("big", anyObject, async () => ok(big))]);
    const result = await pipeline(callContext(registry, "big", {}, { policy, outputStore: null }));
    expect(result).toMatchObject({ status: "ok", handle: null });
    expect(Buffer.byteLength(result.content)).toBeLessThanOrEqual(100);
    expect(result.content.startsWith("row 1 ")).toBe(true);
    expect(result.content.endsWith("[cut]")).toBe(true);
    expect(result.content).not.toContain("\uFFFD");
  });

  it("cuts an oversized failure's reason, keeping the (tool failed: ...) shape", async () => {
    const store = createToolOutputStore({ runHash: "observe3", baseDirectory: scratch });
    const registry = new ToolRegistry([
      functionTool("bigfail", anyObject, async () => ({ text: big, isError: true })),
    ]);
    const result = await pipeline(callContext(registry, "bigfail", {}, { policy, outputStore: store }));
    expect(result).toMatchObject({ status: "failed", error_code: "TOOL_EXECUTION_FAILED", handle: null });
    expect(Buffer.byteLength(result.content)).toBeLessThanOrEqual(100);
    expect(result.content.startsWith("(tool failed: row 1 ")).toBe(true);
    expect(result.content.endsWith("[cut])")).toBe(true);
  });

  it("never stores tool_output's own answer again: it is cut instead", async () => {
    const store = createToolOutputStore({ runHash: "observe4", baseDirectory: scratch });
    const registry = new ToolRegistry([
      functionTool("tool_output", anyObject, async () => ok(big), "builtin"),
    ]);
    const result = await pipeline(callContext(registry, "tool_output", {}, { policy, outputStore: store }));
    expect(result.handle).toBeNull();
    expect(result.content.endsWith("[cut]")).toBe(true);
  });
});

describe("auditStage and results", () => {
  it("measures latency with the environment's monotonic clock and counts characters in and out", async () => {
    const environment = deterministicEnvironment();
    const registry = new ToolRegistry([
      functionTool("timed", anyObject, async () => {
        environment.advance(25);
        return ok("twelve chars");
      }),
    ]);
    const args = { path: "/tmp/x", depth: 2 };
    const result = await pipeline(callContext(registry, "timed", args, { environment }));
    expect(result).toMatchObject({
      latency_ms: 25,
      characters_in: JSON.stringify(args).length,
      characters_out: "twelve chars".length,
    });
    const refused = await pipeline(callContext(registry, "missing", args, { environment }));
    expect(refused.characters_in).toBe(JSON.stringify(args).length);
    expect(refused.characters_out).toBe(refused.content.length);
  });

  it("INV-TOOL-002 results are frozen: returns frozen results, refused or executed", async () => {
    const registry = new ToolRegistry([functionTool("fine", anyObject, async () => ok("fine"))]);
    for (const name of ["fine", "missing"]) {
      const result = await pipeline(callContext(registry, name));
      expect(Object.isFrozen(result)).toBe(true);
      expect(Object.isFrozen(result.source)).toBe(true);
      expect(() => {
        (result as { status: string }).status = "ok";
      }).toThrow(TypeError);
    }
  });
});

describe("composeToolPipeline", () => {
  const registry = new ToolRegistry([functionTool("fine", anyObject, async () => ok("fine"))]);

  it("turns a throwing stage into a failed TOOL_EXECUTION_FAILED result", async () => {
    const throwing: ToolStage = () => {
      throw new Error("stage bug");
    };
    const result = await composeToolPipeline([throwing])(callContext(registry, "fine"));
    expect(result).toMatchObject({ status: "failed", error_code: "TOOL_EXECUTION_FAILED" });
    expect(Object.isFrozen(result)).toBe(true);
  });

  it("refuses a stage that calls next twice, so no tool runs twice", async () => {
    const tool = functionTool("once", anyObject, async () => ok("once"));
    const twice: ToolStage = async (_call, next) => {
      await next();
      return next();
    };
    const result = await composeToolPipeline([twice, lookupStage, executionStage])(
      callContext(new ToolRegistry([tool]), "once"),
    );
    expect(result).toMatchObject({ status: "failed", error_code: "TOOL_EXECUTION_FAILED" });
    expect(tool.calls).toHaveLength(1);
  });

  it("turns a stage returning nothing usable, or no stage answering, into a failed result", async () => {
    const empty: ToolStage = async () => undefined as unknown as ToolExecutionResult;
    expect((await composeToolPipeline([empty])(callContext(registry, "fine"))).status).toBe("failed");
    expect((await composeToolPipeline([lookupStage])(callContext(registry, "fine"))).status).toBe("failed");
    const misordered = await composeToolPipeline([executionStage])(callContext(registry, "fine"));
    expect(misordered).toMatchObject({ status: "failed", error_code: "TOOL_EXECUTION_FAILED" });
  });

  it("lets a stage added before execution answer the call itself", async () => {
    const tool = functionTool("cached", anyObject, async () => ok("computed"));
    const cache: ToolStage = async (call) =>
      freezeToolResult({
        call_id: call.invocation.id,
        tool_name: call.invocation.name,
        status: "ok",
        error_code: null,
        content: "from cache",
        executed: false,
        latency_ms: 0,
        characters_in: 0,
        characters_out: 0,
        handle: null,
        source: call.tool!.manifest.source,
      });
    const withCache = createDefaultPipeline({ beforeExecution: [cache] });
    const result = await withCache(callContext(new ToolRegistry([tool]), "cached", { a: 1 }));
    expect(result).toMatchObject({ status: "ok", content: "from cache", characters_in: 7 });
    expect(tool.calls).toHaveLength(0);
  });
});
