import { describe, expect, it } from "vitest";
import { mcpCall, useMcpTestServer } from "./mcp-session-fixture.js";
import { call, report, runScripted } from "./session-harness.js";

// The model is reached over HTTP through the OpenAI-compatible client; the tools are a real MCP stdio server.
const mcp = useMcpTestServer();
const record = (key: string) => ({ kind: "tool_calls" as const, calls: [mcpCall.record(key)] });

// seed 000 §1
describe("limits: turns, tokens, retries and tool calls per turn", () => {
  it("never exceeds maxTurns: at the cap without a report, a synthetic failure report", async () => {
    const run = await mcp.run({
      settings: { maxTurns: 3 },
      script: [record("1"), record("2"), record("3")],
    });
    expect(run.result.outcome).toBe("FAILED_BUDGET_EXHAUSTED");
    expect(run.result.conversation.filter((message) => message.role === "assistant")).toHaveLength(3);
    expect(run.result.finalReport).toMatchObject({
      status: "failure",
      source: "synthetic",
      metadata: { reason: "max_turns_exhausted" },
    });
    expect(run.result.turns).toBe(3);
    expect(run.verification.ok).toBe(true);
    expect(run.unusedSteps).toBe(0);
    // The last allowed turn offered only final_report: the tool call made on it anyway was answered, never run.
    expect(run.executions).toEqual(["record:1", "record:2"]);
  });

  it("the last allowed turn offers only final_report, asks for a tool call and says it is the final turn", async () => {
    const run = await mcp.run({
      settings: { maxTurns: 3 },
      script: [record("1"), record("2"), { kind: "tool_calls", calls: [report("what I have")] }],
    });
    expect(run.requests[0]!.toolNames).toContain("test__record");
    expect(run.requests[1]!.toolNames).toContain("test__record");
    expect(run.requests[1]!.toolChoice).toBe("auto");
    const last = run.requests[2]!;
    expect(last.toolNames).toEqual(["final_report"]);
    expect(last.toolChoice).toBe("required");
    expect(last.lastMessage).toContain("final turn (3 of 3)");
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.result.finalReport).toMatchObject({
      status: "success",
      source: "tool",
      content: "what I have",
    });
    expect(run.verification.ok).toBe(true);
  });

  it("a single-turn contract keeps its tools on its only turn", async () => {
    const run = await mcp.run({
      settings: { maxTurns: 1 },
      script: [{ kind: "tool_calls", calls: [mcpCall.record("only"), report("done")] }],
    });
    expect(run.requests[0]!.toolNames).toContain("test__record");
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.executions).toEqual(["record:only"]);
  });

  it("a final report on exactly the last allowed turn is a success", async () => {
    const run = await mcp.run({
      settings: { maxTurns: 3 },
      script: [record("1"), record("2"), { kind: "tool_calls", calls: [report("just in time")] }],
    });
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.result.success).toBe(true);
    expect(run.result.turns).toBe(3);
    // The last turn told the model it was the final one.
    expect(run.requests[2]!.lastMessage).toContain("final turn (3 of 3)");
  });

  it("max_tokens_consumed: once the budget is used up and another inference is needed, the run ends", async () => {
    const run = await mcp.run({
      settings: { maxTokensConsumed: 1_000, maxTurns: 5 },
      script: [
        { ...record("1"), usage: { prompt_tokens: 400, completion_tokens: 100 } },
        { ...record("2"), usage: { prompt_tokens: 450, completion_tokens: 80 } },
      ],
    });
    expect(run.result.outcome).toBe("FAILED_BUDGET_EXHAUSTED");
    expect(run.result.error?.code).toBe("BUDGET_EXHAUSTED");
    expect(run.result.finalReport).toMatchObject({
      status: "failure",
      source: "synthetic",
      metadata: { reason: "max_tokens_exhausted" },
    });
    // 500 tokens after turn 1 (under budget: turn 2 ran), 1,030 after turn 2: no third inference.
    expect(run.result.turns).toBe(2);
    expect(run.result.tokens).toEqual({ input: 850, output: 180 });
    expect(run.executions).toEqual(["record:1", "record:2"]);
    expect(run.verification.ok).toBe(true);
    expect(run.unusedSteps).toBe(0);
  });

  it("max_tokens_consumed is read strictly: a report in the turn that crosses the budget still succeeds", async () => {
    const run = await mcp.run({
      settings: { maxTokensConsumed: 1_000 },
      script: [
        { ...record("1"), usage: { prompt_tokens: 400, completion_tokens: 100 } },
        {
          kind: "tool_calls",
          calls: [mcpCall.record("2"), report("done")],
          usage: { prompt_tokens: 900, completion_tokens: 100 },
        },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.result.finalReport).toMatchObject({ status: "success", content: "done" });
    expect(run.result.tokens).toEqual({ input: 1_300, output: 200 });
    expect(run.unusedSteps).toBe(0);
  });

  it("a text answer on the last turn is the report (text fallback)", async () => {
    const run = await mcp.run({
      settings: { maxTurns: 2 },
      script: [record("1"), { kind: "text", text: "The answer is 42." }],
    });
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.result.finalReport).toMatchObject({
      source: "text_fallback",
      status: "success",
      content: "The answer is 42.",
    });
  });

  it("drops calls beyond maxToolCallsPerTurn without executing them, and tells the model", async () => {
    const run = await mcp.run({
      settings: { maxToolCallsPerTurn: 2 },
      script: [
        {
          kind: "tool_calls",
          calls: [mcpCall.record("a"), mcpCall.record("b"), mcpCall.record("c")],
        },
        { kind: "tool_calls", calls: [report("ok")] },
      ],
    });
    expect(run.executions).toEqual(["record:a", "record:b"]);
    const replies = run.result.conversation.filter((message) => message.role === "tool").slice(0, 3);
    expect(replies[2]!.content).toContain("maxToolCallsPerTurn");
    expect(replies[2]!.content).toContain("not executed");
    // Every call of the assistant message is answered, so the conversation stays provider-valid.
    expect(replies.map((message) => message.tool_call_id)).toEqual(
      run.result.conversation
        .find((message) => message.role === "assistant")!
        .tool_calls.map((invocation) => invocation.id),
    );
  });

  it("maxRetries is total attempts per turn, cycling targets round-robin; retries do not count as turns", async () => {
    const run = await mcp.run({
      targets: 2,
      settings: { maxRetries: 3, maxTurns: 2 },
      script: [
        { kind: "error", status: 500 },
        { kind: "error", status: 503 },
        record("x"),
        { kind: "tool_calls", calls: [report("ok")] },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    const llm = run.result.accounting.filter((entry) => entry.type === "llm");
    expect(llm.map((entry) => `${entry.model}:${entry.status}`)).toEqual([
      "m0:failed",
      "m1:failed",
      "m0:ok",
      "m0:ok",
    ]);
    // On the wire: each attempt reached the client of the target it names.
    expect(run.requests.map((request) => request.model)).toEqual(["m0", "m1", "m0", "m0"]);
    expect(run.result.turns).toBe(2);
  });

  it("exhausting maxRetries in a turn ends the run with a typed outcome", async () => {
    const run = await mcp.run({
      settings: { maxRetries: 2 },
      script: [{ kind: "error", status: 500 }, { kind: "disconnect" }],
    });
    expect(run.result.outcome).toBe("FAILED_BUDGET_EXHAUSTED");
    expect(run.result.error?.code).toBe("MODEL_ATTEMPTS_EXHAUSTED");
    expect(run.result.accounting.filter((entry) => entry.type === "llm")).toHaveLength(2);
  });
});

// seed 000 §4
describe("empty, reasoning-only and invalid responses and tool calls", () => {
  it("an empty response is retried, counts as an attempt, and is not added to the conversation", async () => {
    const run = await mcp.run({ script: [{ kind: "empty" }, { kind: "text", text: "hello" }] });
    expect(run.result.outcome).toBe("COMPLETED_CHAT_ONLY");
    expect(run.result.conversation.filter((message) => message.role === "assistant")).toHaveLength(1);
    expect(
      run.result.accounting.filter((entry) => entry.type === "llm").map((entry) => entry.status),
    ).toEqual(["failed", "ok"]);
    expect(run.result.turns).toBe(1);
  });

  it("a reasoning-only response keeps its reasoning in the transcript and retries with guidance", async () => {
    const run = await mcp.run({
      script: [
        { kind: "reasoning_only", reasoning: "I should look it up" },
        { kind: "text", text: "done" },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_CHAT_ONLY");
    expect(run.requests[1]!.lastMessage).toContain("only reasoning");
    const inferEntries = run.writer.entries.filter((entry) => entry.state === "INFER");
    expect(JSON.stringify(inferEntries[0]!.result)).toContain("REASONING_ONLY");
  });

  it("invalid tool parameters: the malformed call is dropped, valid siblings still run", async () => {
    const run = await mcp.run({
      settings: { strict: true, maxFormatRetries: 1 },
      script: [
        { kind: "tool_calls", calls: [mcpCall.record("good"), call("test__record", "{broken")] },
        { kind: "tool_calls", calls: [report("ok")] },
      ],
    });
    expect(run.executions).toEqual(["record:good"]);
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.requests[1]!.lastMessage).toContain("rejected");
  });

  it("non-strict mode repairs malformed arguments and records 'recovered'", async () => {
    const run = await mcp.run({
      settings: { strict: false },
      script: [
        { kind: "tool_calls", calls: [call("test__record", "{key: 'repaired', value: 'v'}")] },
        { kind: "tool_calls", calls: [report("ok")] },
      ],
    });
    expect(run.executions).toEqual(["record:repaired"]);
    const infer = run.writer.entries.find((entry) => entry.state === "INFER")!;
    expect((infer.result as { status: string }).status).toBe("recovered");
  });

  it("invalid tool input is rejected by schema validation and the tool does not run", async () => {
    const run = await mcp.run({
      script: [
        { kind: "tool_calls", calls: [call("test__record", { wrong: 1 })] },
        { kind: "tool_calls", calls: [report("ok")] },
      ],
    });
    expect(run.executions).toEqual([]);
    const reply = run.result.conversation.find((message) => message.role === "tool")!;
    expect(reply.content).toContain("(tool failed:");
    expect(run.result.accounting.find((entry) => entry.type === "tool")).toMatchObject({
      errorCode: "TOOL_INPUT_INVALID",
    });
  });

  it("an unknown tool gets a TOOL_NOT_FOUND result, never an exception", async () => {
    const run = await mcp.run({
      script: [
        { kind: "tool_calls", calls: [call("nope", {})] },
        { kind: "tool_calls", calls: [report("ok")] },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_CHAT_ONLY");
    expect(run.result.accounting.find((entry) => entry.type === "tool")).toMatchObject({
      errorCode: "TOOL_NOT_FOUND",
    });
  });
});

// seed 000 §5
describe("model errors", () => {
  it("an auth error is fatal at once", async () => {
    const run = await mcp.run({
      targets: 2,
      settings: { maxRetries: 5 },
      script: [{ kind: "error", status: 401 }],
    });
    expect(run.result.success).toBe(false);
    expect(run.result.error?.code).toBe("MODEL_AUTHENTICATION_FAILED");
    expect(run.result.accounting).toHaveLength(1);
    expect(run.unusedSteps).toBe(0);
  });

  it("quota exhaustion is fatal at once", async () => {
    const run = await mcp.run({ settings: { maxRetries: 5 }, script: [{ kind: "error", status: 402 }] });
    expect(run.result.outcome).toBe("FAILED_BUDGET_EXHAUSTED");
    expect(run.result.error?.code).toBe("MODEL_QUOTA_EXCEEDED");
  });

  it("a rate limit moves to the next target at once; it waits only when every target is limited, honouring Retry-After", async () => {
    const run = await mcp.run({
      targets: 2,
      settings: { maxRetries: 4 },
      script: [
        { kind: "error", status: 429, headers: { "retry-after": "7" } },
        { kind: "error", status: 429, headers: { "retry-after": "3" } },
        { kind: "text", text: "finally" },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_CHAT_ONLY");
    // Attempt 2 went to the other target without waiting; attempt 3 found both limited and waited for the
    // window that ends first (m1's 3 s), then used m1.
    expect(run.environment.slept).toEqual([3000]);
    const llm = run.result.accounting.filter((entry) => entry.type === "llm");
    expect(llm.map((entry) => `${entry.model}:${entry.status}`)).toEqual(["m0:failed", "m1:failed", "m1:ok"]);
    expect(run.requests.map((request) => request.model)).toEqual(["m0", "m1", "m1"]);
  });

  it("a rate-limited target is not called again inside its Retry-After window while another target is free", async () => {
    const run = await runScripted({
      targets: 2,
      settings: { maxRetries: 4 },
      script: [
        { kind: "error", status: 429, headers: { "retry-after": "30" } },
        { kind: "error", status: 500 },
        { kind: "error", status: 503 },
        { kind: "text", text: "m1 recovered" },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_CHAT_ONLY");
    // m0 asked for 30 s: attempts 3 and 4 (whose rotation starts at m0 and m1) both go to the free m1.
    const llm = run.result.accounting.filter((entry) => entry.type === "llm");
    expect(llm.map((entry) => `${entry.model}:${entry.status}`)).toEqual([
      "m0:failed",
      "m1:failed",
      "m1:failed",
      "m1:ok",
    ]);
    expect(run.requests.map((request) => request.model)).toEqual(["m0", "m1", "m1", "m1"]);
    // m1 is then the only free target: after its failures at attempts 2 and 3 it rests 2 s, then 4 s.
    expect(run.environment.slept).toEqual([2000, 4000]);
  });

  it("one target that cannot be reached is retried with backoff, and the run says the model was never reached", async () => {
    const run = await runScripted({
      settings: { maxRetries: 3 },
      script: [{ kind: "disconnect" }, { kind: "disconnect" }, { kind: "disconnect" }],
    });
    // 1 s after the first failure, 2 s after the second: never a retry within milliseconds.
    expect(run.environment.slept).toEqual([1000, 2000]);
    expect(run.result.outcome).toBe("FAILED_BUDGET_EXHAUSTED");
    expect(run.result.error).toMatchObject({
      code: "MODEL_UNREACHABLE",
      details: { targets: ["scripted/m0"], attempts: 3, url: expect.stringContaining("/chat/completions") },
    });
    expect(run.result.error?.message).toContain("never reached");
    expect(run.result.finalReport).toMatchObject({
      status: "failure",
      source: "synthetic",
      metadata: { reason: "model_unreachable" },
    });
  });

  it("a run whose model answered once is not 'unreachable' when a later turn's attempts all fail", async () => {
    const run = await runScripted({
      settings: { maxRetries: 2, maxTurns: 3 },
      script: [
        { kind: "tool_calls", calls: [call("lookup", { key: "a" })] },
        { kind: "disconnect" },
        { kind: "disconnect" },
      ],
    });
    expect(run.result.error?.code).toBe("MODEL_ATTEMPTS_EXHAUSTED");
    expect(run.result.finalReport?.metadata).toMatchObject({ reason: "max_retries_exhausted" });
  });

  it("a rate limit without Retry-After backs off exponentially from 1 s", async () => {
    const run = await mcp.run({
      settings: { maxRetries: 4 },
      script: [
        { kind: "error", status: 429 },
        { kind: "error", status: 429 },
        { kind: "error", status: 429 },
        { kind: "text", text: "ok" },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_CHAT_ONLY");
    expect(run.environment.slept).toEqual([1000, 2000, 4000]);
  });
});
