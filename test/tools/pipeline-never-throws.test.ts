import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { errorCodes } from "../../src/foundation/error-codes.js";
import { createDefaultPipeline } from "../../src/tools/create-default-pipeline.js";
import type { ToolOutput } from "../../src/tools/tool-definition.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { callContext, functionTool, ok, testPolicy } from "./tool-call-fixture.js";

const schema = {
  type: "object",
  properties: { text: { type: "string", maxLength: 50 }, count: { type: "integer" } },
  required: ["text"],
};

/** Tools that misbehave in every way a tool can: the pipeline must turn each into a frozen result. */
const registry = new ToolRegistry([
  functionTool("echo", schema, async (input) => ok(String(input.text))),
  functionTool("throws", { type: "object" }, async () => {
    throw new Error("boom");
  }),
  functionTool("throws_value", { type: "object" }, () => {
    throw Object.create(null);
  }),
  functionTool("rejects_string", { type: "object" }, () => Promise.reject("plain string")),
  functionTool("malformed", { type: "object" }, async () => null as unknown as ToolOutput),
  functionTool("reports", { type: "object" }, async () => ({ text: "bad", isError: true })),
  functionTool("huge", { type: "object" }, async () => ok("z".repeat(5000))),
  functionTool("charter_error", { type: "object" }, async () => {
    throw new CharterError("TOOL_INPUT_INVALID", "typed");
  }),
]);

const toolName = fc.oneof(
  fc.constantFrom(...registry.names(), "tool_output", ""),
  fc.string(),
  fc.string({ unit: "binary" }),
);
const argumentsRecord = fc.dictionary(
  fc.oneof(fc.constantFrom("text", "count"), fc.string()),
  fc.jsonValue(),
);
const policy = fc.record({
  tool_policy: fc.constantFrom("required", "optional", "forbidden" as const),
  allowed_tools: fc.option(fc.array(fc.constantFrom(...registry.names())), { nil: null }),
  cycle_forbid: fc.array(
    fc.tuple(fc.constantFrom(...registry.names()), fc.constantFrom(...registry.names())),
  ),
  max_bytes: fc.integer({ min: 1, max: 10_000 }),
});

describe("the default pipeline", () => {
  it("never throws: any tool name, arguments and policy give a frozen result with a stable code", async () => {
    const pipeline = createDefaultPipeline();
    await fc.assert(
      fc.asyncProperty(
        toolName,
        argumentsRecord,
        policy,
        fc.option(toolName, { nil: null }),
        async (name, args, drawn, previous) => {
          const context = callContext(registry, name, args, {
            previousToolName: previous,
            policy: testPolicy({
              tool_policy: drawn.tool_policy,
              allowed_tools: drawn.allowed_tools,
              cycle_forbid: drawn.cycle_forbid,
              tool_output_budget: {
                max_bytes_per_call: drawn.max_bytes,
                truncation_marker: "…",
                summarizer_model: null,
              },
            }),
          });
          const result = await pipeline(context);
          expect(Object.isFrozen(result)).toBe(true);
          expect(result.call_id).toBe(context.invocation.id);
          expect(result.tool_name).toBe(name);
          expect(["ok", "failed"]).toContain(result.status);
          if (result.status === "failed") {
            expect(errorCodes).toContain(result.error_code);
            expect(result.content.startsWith("(tool failed: ")).toBe(true);
            expect(result.content.endsWith(")")).toBe(true);
          } else {
            expect(result.error_code).toBeNull();
            expect(Buffer.byteLength(result.content)).toBeLessThanOrEqual(drawn.max_bytes);
          }
          expect(result.characters_in).toBe(JSON.stringify(args).length);
        },
      ),
      { numRuns: 400, seed: 20260101 },
    );
  });
});
