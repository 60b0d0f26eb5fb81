import { describe, expect, it } from "vitest";
import { mcpCall, useMcpTestServer } from "./mcp-session-fixture.js";
import { call, report } from "./session-harness.js";

/**
 * Seed 002 §9: the minimal conformance corpus. Each case asserts the outcome class and transcript invariants.
 * The model is reached over HTTP through the OpenAI-compatible client and the tools are a real MCP stdio server.
 */

const mcp = useMcpTestServer();
type Run = Awaited<ReturnType<typeof mcp.run>>;

function states(run: Run): string[] {
  return run.writer.entries.map((entry) => entry.state);
}

function assertTranscriptInvariants(run: Run): void {
  expect(run.verification.ok).toBe(true);
  const entries = run.writer.entries;
  expect(entries[0]?.state).toBe("PRECHECK");
  expect(entries.at(-1)?.state).toBe("TERMINATE");
  expect(entries.filter((entry) => entry.state === "TERMINATE")).toHaveLength(1);
  expect(run.result.transcript.entries).toBe(entries.length);
  expect(run.result.transcript.headHash).toBe(entries.at(-1)?.hash);
  // Every turn walks the whole machine: no path bypasses the state accounting.
  const commits = entries.filter((entry) => entry.state === "COMMIT").length;
  expect(entries.filter((entry) => entry.state === "OBSERVE")).toHaveLength(commits);
  expect(entries.filter((entry) => entry.state === "VALIDATE_CALLS")).toHaveLength(commits);
  // Every run ends with a report, whatever happened.
  expect(run.result.finalReport).not.toBeNull();
  expect(run.result.success).toBe(run.result.outcome.startsWith("COMPLETED"));
}

// seed 002 §9
describe("conformance corpus: each scenario ends in the outcome the contract prescribes", () => {
  it("1. required-tool prompt with a valid canonical tool call completes with tools", async () => {
    const run = await mcp.run({
      settings: { toolPolicy: "required" },
      script: [
        { kind: "tool_calls", calls: [mcpCall.record("a")] },
        { kind: "tool_calls", calls: [report("done")] },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.result.finalReport).toMatchObject({ status: "success", source: "tool", content: "done" });
    expect(run.executions).toEqual(["record:a"]);
    expect(states(run)).toEqual([
      "PRECHECK",
      ...["INFER", "VALIDATE_CALLS", "EXECUTE", "OBSERVE", "COMMIT"],
      ...["INFER", "VALIDATE_CALLS", "EXECUTE", "OBSERVE", "COMMIT"],
      "TERMINATE",
    ]);
    assertTranscriptInvariants(run);
    expect(run.unusedSteps).toBe(0);
  });

  it("2. required-tool prompt with malformed structured output fails as malformed after bounded retries", async () => {
    const run = await mcp.run({
      settings: { toolPolicy: "required", strict: true, maxFormatRetries: 1 },
      script: [
        { kind: "tool_calls", calls: [call("test__record", '{"key": "a"')] },
        { kind: "tool_calls", calls: [call("test__record", "{key: a}")] },
      ],
    });
    expect(run.result.outcome).toBe("FAILED_PROTOCOL_MALFORMED");
    expect(run.result.error?.code).toBe("PROTOCOL_MALFORMED");
    expect(run.executions).toEqual([]);
    // The retry showed the model a precise error, as an ephemeral notice (not in the conversation).
    expect(run.requests[1]!.lastMessage).toContain("rejected");
    expect(run.result.conversation.some((message) => message.content.includes("rejected"))).toBe(false);
    assertTranscriptInvariants(run);
    expect(run.unusedSteps).toBe(0);
  });

  it("3. required-tool prompt with narration only fails with no tools (strict, no format retries: at once)", async () => {
    const run = await mcp.run({
      settings: { toolPolicy: "required", strict: true, maxFormatRetries: 0 },
      script: [{ kind: "text", text: "I would look that up for you." }],
    });
    expect(run.result.outcome).toBe("FAILED_PROTOCOL_NO_TOOLS");
    expect(run.result.success).toBe(false);
    expect(run.requests).toHaveLength(1);
    assertTranscriptInvariants(run);
  });

  it("3b. narration is retried within max_format_retries before failing", async () => {
    const run = await mcp.run({
      settings: { toolPolicy: "required", maxFormatRetries: 2 },
      script: [
        { kind: "text", text: "Let me think." },
        { kind: "text", text: "Still thinking." },
        { kind: "tool_calls", calls: [mcpCall.record("k"), report("found")] },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.result.turns).toBe(1);
    assertTranscriptInvariants(run);
  });

  it("4. forbidden-tool prompt with an attempted tool call is a contract violation and the tool never runs", async () => {
    const run = await mcp.run({
      settings: { toolPolicy: "forbidden" },
      script: [{ kind: "tool_calls", calls: [mcpCall.record("/etc/passwd")] }],
    });
    expect(run.result.outcome).toBe("FAILED_CONTRACT_VIOLATION");
    expect(run.result.error?.code).toBe("CONTRACT_VIOLATION");
    expect(run.executions).toEqual([]);
    // Only the report channel was offered.
    expect(run.requests[0]!.toolNames).toEqual(["final_report"]);
    assertTranscriptInvariants(run);
  });

  it("5. an oversized tool result is stored behind a handle the model can read", async () => {
    const run = await mcp.run({
      settings: { toolResponseMaxBytes: 2000 },
      script: [
        { kind: "tool_calls", calls: [mcpCall.bigOutput(200)] },
        { kind: "tool_calls", calls: [report("summarised")] },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    const toolReply = run.result.conversation.find((message) => message.role === "tool")!;
    const handle = JSON.parse(toolReply.content);
    expect(handle).toMatchObject({ handle: expect.any(String), bytes: expect.any(Number), lines: 200 });
    expect(handle.reason).toEqual(expect.any(String));
    expect(handle.tokens).toBeGreaterThan(0);
    expect(handle.bytes).toBeGreaterThan(2000);
    assertTranscriptInvariants(run);
  });

  it("6. a timeout-inducing tool call fails the call, not the run", async () => {
    const run = await mcp.run({
      settings: { toolTimeout: 20 },
      script: [
        { kind: "tool_calls", calls: [mcpCall.hang()] },
        { kind: "tool_calls", calls: [report("gave up waiting")] },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    const toolReply = run.result.conversation.find((message) => message.role === "tool")!;
    expect(toolReply.content).toBe("(tool failed: timeout)");
    const toolEntry = run.result.accounting.find((entry) => entry.type === "tool");
    expect(toolEntry).toMatchObject({ status: "failed", errorCode: "TOOL_TIMEOUT" });
    assertTranscriptInvariants(run);
  });
});

describe("stored tool outputs", () => {
  it("the model reads a stored output back through tool_output (line range and grep)", async () => {
    let handle = "";
    const run = await mcp.run({
      settings: { toolResponseMaxBytes: 2000 },
      respond: (request, index) => {
        if (index === 0) return { kind: "tool_calls", calls: [mcpCall.bigOutput(200)] };
        if (index === 1) {
          handle = JSON.parse(request.lastMessage).handle;
          return {
            kind: "tool_calls",
            calls: [
              call("tool_output", { handle, mode: "read", start_line: 10, end_line: 12 }),
              call("tool_output", { handle, mode: "grep", pattern: "line 000150 " }),
            ],
          };
        }
        return { kind: "tool_calls", calls: [report("read it")] };
      },
    });
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    const replies = run.result.conversation.filter((message) => message.role === "tool");
    expect(replies[1]!.content).toContain("line 000010 ");
    expect(replies[1]!.content).toContain("line 000012 ");
    expect(replies[1]!.content).not.toContain("line 000013 ");
    expect(replies[2]!.content).toContain("line 000150 ");
  });

  it("a handle outside the run directory is refused as data", async () => {
    const run = await mcp.run({
      script: [
        { kind: "tool_calls", calls: [call("tool_output", { handle: "../../etc/passwd", mode: "read" })] },
        { kind: "tool_calls", calls: [report("ok")] },
      ],
    });
    const reply = run.result.conversation.find((message) => message.role === "tool")!;
    expect(reply.content.startsWith("(tool failed:")).toBe(true);
    expect(run.result.accounting.find((entry) => entry.type === "tool")?.status).toBe("failed");
  });
});
