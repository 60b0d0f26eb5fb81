import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { agentOutcomes } from "../../src/contract/agent-outcome.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { mcpCall, useMcpTestServer } from "./mcp-session-fixture.js";
import { call, report } from "./session-harness.js";

// Every run goes over HTTP to the scripted server through the OpenAI-compatible client, with the tools of
// one real MCP stdio server shared by all runs.
const mcp = useMcpTestServer();

const behaviour: fc.Arbitrary<ScriptedStep> = fc.oneof(
  fc
    .record({ key: fc.string({ maxLength: 8 }) })
    .map(({ key }) => ({ kind: "tool_calls" as const, calls: [mcpCall.record(key)] })),
  fc.constant({ kind: "tool_calls" as const, calls: [call("test__record", '{"key": ')] }),
  fc.constant({ kind: "tool_calls" as const, calls: [call("no_such_tool", {})] }),
  // An oversized output after a recorded call: the policy checks below read the record file, where
  // big_output (a tool without side effects) leaves nothing, to see whether a tool ran.
  fc.constant({ kind: "tool_calls" as const, calls: [mcpCall.record("big"), mcpCall.bigOutput(300)] }),
  fc.constant({
    kind: "tool_calls" as const,
    calls: [mcpCall.record("a"), mcpCall.record("b"), mcpCall.recordSlowly("p")],
  }),
  fc.string({ maxLength: 20 }).map((text) => ({ kind: "text" as const, text })),
  fc.constant({ kind: "empty" as const }),
  fc.constant({ kind: "reasoning_only" as const, reasoning: "hmm" }),
  fc.constantFrom(401, 429, 500, 503).map((status) => ({ kind: "error" as const, status })),
  fc.constant({ kind: "disconnect" as const }),
  fc.constant({ kind: "tool_calls" as const, calls: [report("done")] }),
);

const settings = fc
  .record({
    maxTurns: fc.integer({ min: 1, max: 5 }),
    maxRetries: fc.integer({ min: 1, max: 3 }),
    maxToolCallsPerTurn: fc.integer({ min: 1, max: 3 }),
    maxFormatRetries: fc.integer({ min: 0, max: 2 }),
    toolPolicy: fc.constantFrom("required" as const, "optional" as const, "forbidden" as const),
    strict: fc.boolean(),
    toolResponseMaxBytes: fc.constantFrom(500, 100_000),
  })
  // Strict mode allows at most one format retry: the factory refuses more.
  .map((drawn) =>
    drawn.strict ? { ...drawn, maxFormatRetries: Math.min(drawn.maxFormatRetries, 1) } : drawn,
  );

describe("random model behaviour (property)", () => {
  it("always gives a typed outcome and a report, never exceeds a limit, and leaves a transcript that verifies", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(behaviour, { maxLength: 14 }),
        settings,
        fc.integer({ min: 1, max: 3 }),
        async (steps, contractSettings, targets) => {
          const run = await mcp.run({
            targets,
            settings: { ...contractSettings, cycleForbid: [["test__record_slowly", "test__record_slowly"]] },
            // After the script, the model keeps reporting, so "unexpected call" errors stay out of the picture.
            respond: (_request, index) => steps[index] ?? { kind: "tool_calls", calls: [report("fallback")] },
          });
          const { result } = run;
          expect(agentOutcomes).toContain(result.outcome);
          expect(result.finalReport).not.toBeNull();
          expect(result.success).toBe(
            result.outcome === "COMPLETED_WITH_TOOLS" || result.outcome === "COMPLETED_CHAT_ONLY",
          );
          if (result.success) expect(result.finalReport?.status).toBe("success");
          else expect(result.error?.code).toEqual(expect.any(String));
          // Limits: turns, attempts per turn, executed calls per turn.
          expect(result.turns).toBeLessThanOrEqual(contractSettings.maxTurns);
          expect(
            result.conversation.filter((message) => message.role === "assistant").length,
          ).toBeLessThanOrEqual(contractSettings.maxTurns);
          const attemptsPerTurn = new Map<number, number>();
          for (const entry of result.accounting) {
            if (entry.type === "llm")
              attemptsPerTurn.set(entry.turn, (attemptsPerTurn.get(entry.turn) ?? 0) + 1);
          }
          for (const attempts of attemptsPerTurn.values())
            expect(attempts).toBeLessThanOrEqual(contractSettings.maxRetries);
          const executedPerTurn = new Map<number, number>();
          for (const entry of result.accounting) {
            if (entry.type === "tool" && entry.errorCode !== "TOOL_NOT_FOUND") {
              executedPerTurn.set(entry.turn, (executedPerTurn.get(entry.turn) ?? 0) + 1);
            }
          }
          for (const executed of executedPerTurn.values())
            expect(executed).toBeLessThanOrEqual(contractSettings.maxToolCallsPerTurn);
          // Policies.
          if (contractSettings.toolPolicy === "forbidden") expect(run.executions).toEqual([]);
          if (contractSettings.toolPolicy === "required" && result.success)
            expect(run.executions.length).toBeGreaterThan(0);
          // Every assistant tool call is answered by exactly one tool message (provider-valid conversation).
          const answered = new Set(
            result.conversation
              .filter((message) => message.role === "tool")
              .map((message) => message.tool_call_id),
          );
          for (const message of result.conversation) {
            for (const invocation of message.tool_calls) expect(answered.has(invocation.id)).toBe(true);
          }
          expect(run.verification.ok).toBe(true);
        },
      ),
      { numRuns: 150, seed: 20261122 },
    );
  }, 120_000);
});
