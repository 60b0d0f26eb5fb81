import { describe, expect, it } from "vitest";
import { contextBudgetExceededContent } from "../../src/session/observe-tool-results.js";
import { mcpCall, useMcpTestServer } from "./mcp-session-fixture.js";
import { call, report } from "./session-harness.js";

// The model is reached over HTTP through the OpenAI-compatible client; the tools are a real MCP stdio server.
const mcp = useMcpTestServer();

type InferAction = {
  request_metrics: {
    ctx_tokens: number;
    pending_ctx_tokens: number;
    schema_ctx_tokens: number;
    expected_tokens: number;
  };
};

// seed 000 §2
describe("context guard", () => {
  it("every prepared request satisfies expected = ctx + pending + schema", async () => {
    const run = await mcp.run({
      script: [
        { kind: "empty" },
        { kind: "tool_calls", calls: [mcpCall.record("a")] },
        { kind: "tool_calls", calls: [report("ok")] },
      ],
    });
    const infers = run.writer.entries.filter((entry) => entry.state === "INFER");
    expect(infers).toHaveLength(3);
    for (const entry of infers) {
      const metrics = (entry.action as InferAction).request_metrics;
      expect(metrics.expected_tokens).toBe(
        metrics.ctx_tokens + metrics.pending_ctx_tokens + metrics.schema_ctx_tokens,
      );
      expect(metrics.schema_ctx_tokens).toBeGreaterThan(0);
    }
    // The retry notice after the empty response is pending, not committed.
    expect((infers[1]!.action as InferAction).request_metrics.pending_ctx_tokens).toBeGreaterThan(0);
    // Committed tokens grow with the conversation.
    expect((infers[2]!.action as InferAction).request_metrics.ctx_tokens).toBeGreaterThan(
      (infers[1]!.action as InferAction).request_metrics.ctx_tokens,
    );
  });

  it("a tool output that would overflow the window is replaced, and the next turn offers only final_report", async () => {
    const run = await mcp.run({
      contextWindow: 6000,
      settings: { maxOutputTokens: 1000, toolResponseMaxBytes: 1_000_000 },
      script: [
        { kind: "tool_calls", calls: [mcpCall.bigOutput(3000)] },
        { kind: "tool_calls", calls: [report("best effort")] },
      ],
    });
    const reply = run.result.conversation.find((message) => message.role === "tool")!;
    expect(reply.content).toBe(contextBudgetExceededContent);
    const forced = run.requests[1]!;
    expect(forced.toolNames).toEqual(["final_report"]);
    expect(forced.toolChoice).toBe("required");
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.verification.ok).toBe(true);
  });

  it("force_synthesis_at_ratio triggers the same forced final turn", async () => {
    const run = await mcp.run({
      settings: { forceSynthesisAtRatio: 0.001 },
      script: [
        { kind: "tool_calls", calls: [mcpCall.record("a")] },
        { kind: "tool_calls", calls: [report("synthesised")] },
      ],
    });
    expect(run.requests[1]!.toolNames).toEqual(["final_report"]);
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
  });

  it("a turn the context guard forced that produces no report ends with a synthetic failure", async () => {
    const run = await mcp.run({
      contextWindow: 6000,
      settings: { maxOutputTokens: 1000, toolResponseMaxBytes: 1_000_000 },
      script: [
        { kind: "tool_calls", calls: [mcpCall.bigOutput(3000)] },
        { kind: "tool_calls", calls: [mcpCall.record("b")] },
      ],
    });
    expect(run.requests[1]!.toolNames).toEqual(["final_report"]);
    expect(run.result.outcome).toBe("FAILED_BUDGET_EXHAUSTED");
    expect(run.result.finalReport).toMatchObject({
      source: "synthetic",
      metadata: { reason: "context_window_exhausted" },
    });
    expect(run.executions).toEqual([]);
  });
});

// Seed 002 predicate 4.
describe("force_synthesis_at_ratio ends with the outcome its policy prescribes, never FAILED_BUDGET_EXHAUSTED", () => {
  it("tools executed and no report on the synthesis turn: COMPLETED_WITH_TOOLS with a synthetic report", async () => {
    const run = await mcp.run({
      settings: { forceSynthesisAtRatio: 0.001 },
      script: [
        { kind: "tool_calls", calls: [mcpCall.record("a")] },
        { kind: "tool_calls", calls: [mcpCall.record("b")] },
      ],
    });
    expect(run.requests[1]!.toolNames).toEqual(["final_report"]);
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.result.success).toBe(true);
    expect(run.result.error).toBeNull();
    expect(run.result.finalReport).toMatchObject({
      status: "success",
      source: "synthetic",
      metadata: { reason: "synthesis_without_report", tools_used: ["test__record"] },
    });
    // The call the synthesis turn made was answered, never run.
    expect(run.executions).toEqual(["record:a"]);
    const terminate = run.writer.entries.at(-1)!;
    expect(terminate.action).toEqual({ predicate: "force_synthesis_at_ratio" });
    expect(run.verification.ok).toBe(true);
  });

  // A call whose input fails validation is not an execution: the first turn commits with no tool run.
  const invalidRecord = { kind: "tool_calls" as const, calls: [call("test__record", { value: 1 })] };

  it("no tool executed under optional: COMPLETED_CHAT_ONLY with a synthetic report", async () => {
    const run = await mcp.run({
      settings: { forceSynthesisAtRatio: 0.001, toolPolicy: "optional" },
      script: [invalidRecord, { kind: "tool_calls", calls: [mcpCall.record("late")] }],
    });
    expect(run.result.outcome).toBe("COMPLETED_CHAT_ONLY");
    expect(run.result.finalReport).toMatchObject({
      status: "success",
      source: "synthetic",
      metadata: { reason: "synthesis_without_report" },
    });
    expect(run.executions).toEqual([]);
    expect(run.verification.ok).toBe(true);
  });

  it("no tool executed under required: the policy failure FAILED_PROTOCOL_NO_TOOLS", async () => {
    const run = await mcp.run({
      settings: { forceSynthesisAtRatio: 0.001, toolPolicy: "required" },
      script: [invalidRecord, { kind: "tool_calls", calls: [mcpCall.record("late")] }],
    });
    expect(run.result.outcome).toBe("FAILED_PROTOCOL_NO_TOOLS");
    expect(run.result.finalReport).toMatchObject({ status: "failure", source: "synthetic" });
    expect(run.executions).toEqual([]);
  });

  it("a report on the synthesis turn is the run's report, as before", async () => {
    const run = await mcp.run({
      settings: { forceSynthesisAtRatio: 0.001 },
      script: [
        { kind: "tool_calls", calls: [mcpCall.record("a")] },
        { kind: "tool_calls", calls: [report("synthesised")] },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.result.finalReport).toMatchObject({ source: "tool", content: "synthesised" });
  });
});

// seed 002 predicate 1
describe("interrupts and timeouts", () => {
  it("an abort signal during a tool ends the run INTERRUPTED with a report and a verifiable transcript", async () => {
    const controller = new AbortController();
    const run = await mcp.run({
      signal: controller.signal,
      // The interrupt arrives once the tool has started, whatever the timing of HTTP and the MCP process.
      onEvent: (event) => {
        if (event.type === "tool_call_started") controller.abort();
      },
      script: [{ kind: "tool_calls", calls: [mcpCall.hang()] }],
    });
    expect(run.result.outcome).toBe("INTERRUPTED");
    expect(run.result.error?.code).toBe("INTERRUPTED");
    expect(run.result.finalReport?.status).toBe("failure");
    expect(run.verification.ok).toBe(true);
  });

  it("an abort before the run starts ends it INTERRUPTED without any inference", async () => {
    const controller = new AbortController();
    controller.abort();
    const run = await mcp.run({ signal: controller.signal, script: [] });
    expect(run.result.outcome).toBe("INTERRUPTED");
    expect(run.requests).toHaveLength(0);
  });

  it("total_timeout_ms stops a run whose tool hangs: FAILED_TIMEOUT", async () => {
    const run = await mcp.run({
      // Long enough for the one HTTP inference to end first, so the timeout lands while the tool hangs.
      settings: { totalTimeout: 300, toolTimeout: 60_000 },
      script: [{ kind: "tool_calls", calls: [mcpCall.hang()] }],
    });
    expect(run.result.outcome).toBe("FAILED_TIMEOUT");
    expect(run.result.error?.code).toBe("TIMEOUT");
  });

  it("step_timeout_ms stops a turn that takes too long: FAILED_TIMEOUT", async () => {
    const run = await mcp.run({
      settings: { stepTimeout: 300, toolTimeout: 60_000 },
      script: [{ kind: "tool_calls", calls: [mcpCall.hang()] }],
    });
    expect(run.result.outcome).toBe("FAILED_TIMEOUT");
  });
});
