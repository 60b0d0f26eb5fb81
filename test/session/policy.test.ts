import { describe, expect, it } from "vitest";
import { mcpCall, useMcpTestServer } from "./mcp-session-fixture.js";
import { call, report } from "./session-harness.js";

// The model is reached over HTTP through the OpenAI-compatible client; the tools are a real MCP stdio server.
const mcp = useMcpTestServer();

describe("tool policy and cycle rules (seed 002)", () => {
  it("required: a final report before any tool is refused; the model must act", async () => {
    const run = await mcp.run({
      settings: { toolPolicy: "required", maxFormatRetries: 1 },
      script: [
        { kind: "tool_calls", calls: [report("I already know")] },
        { kind: "tool_calls", calls: [mcpCall.record("k")] },
        { kind: "tool_calls", calls: [report("looked it up")] },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.result.finalReport).toMatchObject({ content: "looked it up" });
    const refused = run.result.conversation.find((message) => message.role === "tool")!;
    expect(refused.content).toContain("tool_policy=required");
  });

  it("required: a report without any tool, past the format retries, never ends in success", async () => {
    const run = await mcp.run({
      settings: { toolPolicy: "required", maxFormatRetries: 0 },
      script: [{ kind: "tool_calls", calls: [report("trust me")] }],
    });
    expect(run.result.outcome).toBe("FAILED_PROTOCOL_NO_TOOLS");
    expect(run.result.success).toBe(false);
  });

  it("required: a tool call and a report in the same response complete with tools", async () => {
    const run = await mcp.run({
      settings: { toolPolicy: "required", maxTurns: 1 },
      script: [{ kind: "tool_calls", calls: [mcpCall.record("k"), report("one shot")] }],
    });
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.executions).toEqual(["record:k"]);
  });

  it("optional: a chat-only answer completes chat-only", async () => {
    const run = await mcp.run({
      settings: { toolPolicy: "optional" },
      script: [{ kind: "text", text: "hi" }],
    });
    expect(run.result.outcome).toBe("COMPLETED_CHAT_ONLY");
    expect(run.result.finalReport).toMatchObject({ source: "text_fallback", content: "hi" });
  });

  it("cycle_forbid: a forbidden ordered pair ends the run as a contract violation before the second call runs", async () => {
    const run = await mcp.run({
      settings: { cycleForbid: [["test__record", "test__record"]] },
      script: [
        { kind: "tool_calls", calls: [mcpCall.record("a")] },
        { kind: "tool_calls", calls: [mcpCall.record("b")] },
      ],
    });
    expect(run.result.outcome).toBe("FAILED_CONTRACT_VIOLATION");
    expect(run.executions).toEqual(["record:a"]);
    expect(run.unusedSteps).toBe(0);
  });

  it("cycle_forbid also applies within one response", async () => {
    const run = await mcp.run({
      settings: { cycleForbid: [["test__record", "test__record_slowly"]] },
      script: [{ kind: "tool_calls", calls: [mcpCall.record("k"), mcpCall.recordSlowly("x")] }],
    });
    expect(run.result.outcome).toBe("FAILED_CONTRACT_VIOLATION");
    expect(run.executions).toEqual([]);
  });

  it("allowedTools: a tool outside the list is refused and not run", async () => {
    const run = await mcp.run({
      settings: { allowedTools: ["test__record"] },
      script: [
        { kind: "tool_calls", calls: [mcpCall.recordSlowly("x")] },
        { kind: "tool_calls", calls: [report("ok")] },
      ],
    });
    expect(run.executions).toEqual([]);
    expect([...run.requests[0]!.toolNames].sort()).toEqual(["final_report", "test__record"]);
  });

  it("json output: a report that breaks the output schema is retried, then fails with OUTPUT_SCHEMA_INVALID", async () => {
    const schema = {
      type: "object",
      properties: { total: { type: "number" } },
      required: ["total"],
      additionalProperties: false,
    };
    const run = await mcp.run({
      settings: { output: { format: "json", schema }, maxFormatRetries: 1 },
      script: [
        {
          kind: "tool_calls",
          calls: [call("final_report", { format: "json", content_json: { total: "many" } })],
        },
        { kind: "tool_calls", calls: [call("final_report", { format: "json", content_json: { sum: 3 } })] },
      ],
    });
    expect(run.result.outcome).toBe("FAILED_VALIDATION");
    expect(run.result.error?.code).toBe("OUTPUT_SCHEMA_INVALID");
  });

  it("json output: a valid report is returned as content_json", async () => {
    const schema = { type: "object", properties: { total: { type: "number" } }, required: ["total"] };
    const run = await mcp.run({
      settings: { output: { format: "json", schema } },
      script: [
        { kind: "tool_calls", calls: [call("final_report", { format: "json", content_json: { total: 3 } })] },
      ],
    });
    expect(run.result.finalReport).toMatchObject({
      format: "json",
      content_json: { total: 3 },
      status: "success",
    });
  });
});
