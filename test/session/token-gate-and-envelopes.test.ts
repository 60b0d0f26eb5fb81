import { describe, expect, it } from "vitest";
import type { CharterEvent } from "../../src/session/charter-event.js";
import { defineFunctionTool } from "../../src/tools/define-function-tool.js";
import type { ToolOutput } from "../../src/tools/tool-definition.js";
import { call, recordingTools, report, runScripted } from "./session-harness.js";

function textDeltas(events: readonly CharterEvent[]): string {
  return events
    .filter((event): event is Extract<CharterEvent, { type: "text_delta" }> => event.type === "text_delta")
    .map((event) => event.text)
    .join("");
}

// Seed 002 Invariant F.
describe("tokenGate under toolPolicy: required", () => {
  it("asks the provider for a tool call and streams no text until a tool call has executed", async () => {
    const events: CharterEvent[] = [];
    const run = await runScripted({
      settings: { toolPolicy: "required", tokenGate: true, stream: true, maxFormatRetries: 1 },
      onEvent: (event) => events.push(event),
      script: [
        { kind: "text", text: "NARRATION instead of acting" },
        { kind: "tool_calls", text: "HELD beside the call", calls: [call("lookup", { key: "k" })] },
        { kind: "text", text: "ANSWER after acting" },
      ],
    });
    expect(run.requests.map((request) => request.toolChoice)).toEqual(["required", "required", "auto"]);
    const streamed = textDeltas(events);
    expect(streamed).not.toContain("NARRATION");
    expect(streamed).not.toContain("HELD");
    expect(streamed).toContain("ANSWER after acting");
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(run.executions).toEqual(["lookup:k"]);
    expect(run.verification.ok).toBe(true);
  });

  it("without tokenGate, requests leave the choice to the model and text streams as it comes", async () => {
    const events: CharterEvent[] = [];
    const run = await runScripted({
      settings: { toolPolicy: "required", stream: true },
      onEvent: (event) => events.push(event),
      script: [
        { kind: "tool_calls", text: "SHOWN beside the call", calls: [call("lookup", { key: "k" })] },
        { kind: "tool_calls", calls: [report("done")] },
      ],
    });
    expect(run.requests.map((request) => request.toolChoice)).toEqual(["auto", "auto"]);
    expect(textDeltas(events)).toContain("SHOWN");
  });
});

// Seed 002 Phase 3: any malformed tool result envelope => FAILED_VALIDATION.
describe("a malformed tool result envelope", () => {
  const malformed = defineFunctionTool({
    name: "malformed",
    description: "Returns something that is not a tool output.",
    inputSchema: { type: "object", properties: {} },
    async execute() {
      return { text: 42, isError: "no" } as unknown as ToolOutput;
    },
  });

  it("ends the run FAILED_VALIDATION, with the call's failure in the conversation", async () => {
    const executions: string[] = [];
    const run = await runScripted({
      tools: [...recordingTools(executions), malformed],
      script: [
        { kind: "tool_calls", calls: [call("malformed", {})] },
        { kind: "tool_calls", calls: [report("should not be reached")] },
      ],
    });
    expect(run.result.outcome).toBe("FAILED_VALIDATION");
    expect(run.result.error?.code).toBe("TOOL_RESULT_INVALID");
    expect(run.result.finalReport).toMatchObject({
      status: "failure",
      source: "synthetic",
      metadata: { reason: "invalid_tool_result" },
    });
    expect(run.unusedSteps).toBe(1);
    const toolReply = run.result.conversation.find((message) => message.role === "tool");
    expect(toolReply?.content).toContain("malformed result");
    expect(run.verification.ok).toBe(true);
  });
});
