import { describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { prepareAgent } from "../../src/runner/prepare-agent.js";
import type { CharterEvent } from "../../src/session/charter-event.js";
import { createStrictScriptedModel } from "../../src/testing/strict-scripted-model.js";
import { call, recordingTools, report } from "./session-harness.js";

describe("typed event stream", () => {
  it("derives turn, attempt, tool, guard, report and outcome events from the transitions, in order", async () => {
    const environment = deterministicEnvironment();
    const model = createStrictScriptedModel({
      environment,
      script: [
        { kind: "error", status: 503 },
        { kind: "tool_calls", calls: [call("lookup", { key: "a" }, "call_a")] },
        { kind: "tool_calls", calls: [report("done")] },
      ],
    });
    const agent = prepareAgent({
      agent: { id: "events", systemPrompt: "s", settings: { maxRetries: 2 } },
      targets: [{ provider: "scripted", model: "m", contextWindow: 100_000 }],
      models: [model],
      tools: recordingTools([]),
      environment,
    });
    const events: CharterEvent[] = [];
    const { result } = await agent.run({ prompt: "go", onEvent: (event) => events.push(event) });
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(events.map((event) => event.type)).toEqual([
      "turn_started",
      "model_attempt_started",
      "model_attempt_ended",
      "model_attempt_started",
      "model_attempt_ended",
      "tool_call_started",
      "tool_call_ended",
      "turn_started",
      "model_attempt_started",
      "model_attempt_ended",
      "final_report",
      "outcome",
    ]);
    expect(events[2]).toMatchObject({ type: "model_attempt_ended", status: "failed", attempt: 1 });
    expect(events[5]).toMatchObject({
      type: "tool_call_started",
      callId: "call_a",
      name: "lookup",
      arguments: { key: "a" },
    });
    expect(events.at(-1)).toMatchObject({
      type: "outcome",
      outcome: "COMPLETED_WITH_TOOLS",
      success: true,
      turns: 2,
    });
  });

  it("reports the context guard firing", async () => {
    const environment = deterministicEnvironment();
    const model = createStrictScriptedModel({
      environment,
      script: [
        { kind: "tool_calls", calls: [call("lookup", { key: "a" })] },
        { kind: "tool_calls", calls: [report("x")] },
      ],
    });
    const agent = prepareAgent({
      agent: { id: "events", systemPrompt: "s", settings: { forceSynthesisAtRatio: 0.001 } },
      targets: [{ provider: "scripted", model: "m", contextWindow: 100_000 }],
      models: [model],
      tools: recordingTools([]),
      environment,
    });
    const events: CharterEvent[] = [];
    await agent.run({ prompt: "go", onEvent: (event) => events.push(event) });
    const guard = events.findIndex((event) => event.type === "context_guard_fired");
    expect(guard).toBeGreaterThan(0);
    expect(events[guard + 2]).toMatchObject({ type: "model_attempt_started", forcedFinalTurn: true });
  });
});
