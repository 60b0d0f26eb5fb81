import { describe, expect, it } from "vitest";
import { defineFunctionTool } from "../../src/tools/define-function-tool.js";
import { mcpCall, useMcpTestServer } from "./mcp-session-fixture.js";
import { call, recordingTools, report, runScripted } from "./session-harness.js";

// The model is reached over HTTP through the OpenAI-compatible client; the tools are a real MCP stdio server,
// except where a test needs a tool that reports its own error (an in-process function tool, a real user feature).
const mcp = useMcpTestServer();

// seed 002
describe("tool policy and cycle rules", () => {
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

  it("required: the built-in tool_output does not count, an agent tool that ran and reported an error does", async () => {
    const executions: string[] = [];
    const failing = defineFunctionTool({
      name: "fetch_record",
      description: "Fetches a record.",
      inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
      async execute(input) {
        executions.push(`fetch_record:${String(input.id)}`);
        return { text: "no such record", isError: true };
      },
    });
    const run = await runScripted({
      settings: { toolPolicy: "required", maxFormatRetries: 1 },
      tools: [...recordingTools(executions), failing],
      script: [
        {
          kind: "tool_calls",
          calls: [
            call("tool_output", { handle: "out-1", mode: "read" }, "read-1"),
            call("final_report", { format: "markdown", content: "nothing to do" }, "report-1"),
          ],
        },
        { kind: "tool_calls", calls: [call("fetch_record", { id: "r1" }), report("r1 does not exist")] },
      ],
    });
    expect(run.unusedSteps).toBe(0);
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.result.finalReport).toMatchObject({ content: "r1 does not exist", status: "success" });
    expect(run.result.turns).toBe(2);
    expect(executions).toEqual(["fetch_record:r1"]);
    // Turn 1: tool_output ran (and failed on its unknown handle), but the report beside it was refused.
    const firstValidation = run.writer.entries.find((entry) => entry.state === "VALIDATE_CALLS")!;
    expect(firstValidation.result).toMatchObject({
      execute: ["read-1"],
      planned: [{ id: "report-1", status: "failed", error_code: "CONTRACT_VIOLATION" }],
    });
  });

  it("required: tool_output and final_report alone, past the format retries, end FAILED_PROTOCOL_NO_TOOLS", async () => {
    const run = await runScripted({
      settings: { toolPolicy: "required", maxFormatRetries: 0 },
      script: [
        {
          kind: "tool_calls",
          calls: [call("tool_output", { handle: "out-1", mode: "read" }), report("done")],
        },
      ],
    });
    expect(run.result.outcome).toBe("FAILED_PROTOCOL_NO_TOOLS");
    expect(run.result.success).toBe(false);
    expect(run.result.error?.code).toBe("PROTOCOL_NO_TOOLS");
  });

  it("required: an agent tool call whose input is invalid does not run, so the report beside it is refused", async () => {
    const run = await mcp.run({
      settings: { toolPolicy: "required", maxFormatRetries: 0 },
      script: [
        {
          kind: "tool_calls",
          calls: [
            call("test__record", {}, "record-1"),
            call("final_report", { format: "markdown", content: "looked it up" }, "report-1"),
          ],
        },
      ],
    });
    expect(run.executions).toEqual([]);
    expect(run.result.outcome).toBe("FAILED_PROTOCOL_NO_TOOLS");
    const observed = run.writer.entries.find((entry) => entry.state === "OBSERVE")!;
    expect(observed.result).toMatchObject({
      observed: [
        { id: "record-1", status: "failed", error_code: "TOOL_INPUT_INVALID" },
        { id: "report-1", status: "failed", error_code: "CONTRACT_VIOLATION" },
      ],
    });
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
