import { afterEach, describe, expect, it } from "vitest";
import { runConformanceCorpus } from "../../src/conformance/run-conformance-corpus.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import {
  type ScriptedProviderServer,
  startScriptedProviderServer,
} from "../../src/testing/scripted-provider-server.js";
import { clientFor, clockStart, providerCases } from "../model/provider-fixtures.js";
import { misbehavingModel, wellBehavedModel } from "./conformance-scripts.js";

let server: ScriptedProviderServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

async function corpusOver(providerCase: (typeof providerCases)[number], script: readonly ScriptedStep[]) {
  server = await startScriptedProviderServer({ script });
  const report = await runConformanceCorpus({
    target: { provider: "scripted", model: providerCase.model, contextWindow: 32_000 },
    model: clientFor(providerCase, server),
    environment: deterministicEnvironment({ start: clockStart }),
    toolTimeoutMs: 50,
  });
  // Every scripted answer was asked for, and no request came after the script ended.
  expect(server.remaining()).toBe(0);
  expect(server.requests.every((request) => request.wire === providerCase.wire)).toBe(true);
  expect(server.requests.some((request) => request.scriptExhausted)).toBe(false);
  return report;
}

function summary(report: Awaited<ReturnType<typeof corpusOver>>) {
  return report.runs.map((run) => [run.case, run.behaviour, run.outcome, run.passed]);
}

describe.each(providerCases)("the conformance corpus over $label", (providerCase) => {
  it("judges a model that does what each case asks: every case passes", async () => {
    const report = await corpusOver(providerCase, wellBehavedModel);
    expect(report.runs.flatMap((run) => run.problems)).toEqual([]);
    expect(summary(report)).toEqual([
      ["required_valid_call", "called_tools_and_reported", "COMPLETED_WITH_TOOLS", true],
      ["required_malformed", "called_tools_and_reported", "COMPLETED_WITH_TOOLS", true],
      ["required_narration", "narrated", "FAILED_PROTOCOL_NO_TOOLS", true],
      ["forbidden_attempted_call", "reported_without_tools", "COMPLETED_CHAT_ONLY", true],
      ["oversized_output", "called_tools_and_reported", "COMPLETED_WITH_TOOLS", true],
      ["timeout_call", "called_tools_and_reported", "COMPLETED_WITH_TOOLS", true],
    ]);
    expect(report.passed).toBe(true);
    expect(report.runs[0]!.inferences).toEqual(["called lookup_order", "called final_report"]);
    expect(report.metrics).toMatchObject({
      runs: 6,
      // Of the five runs under a required policy, only the narration executed no tool.
      noToolCallRate: 1 / 5,
      parseFailureRate: 0,
      inferencesPerRun: { average: 10 / 6, p95: 2 },
      budgetExhaustedExits: 0,
    });
  });

  it("judges a model that misbehaves in every case by what it did: every case still passes", async () => {
    const report = await corpusOver(providerCase, misbehavingModel(providerCase.wire));
    expect(report.runs.flatMap((run) => run.problems)).toEqual([]);
    const ollama = providerCase.wire === "ollama";
    expect(summary(report)).toEqual([
      ["required_valid_call", "narrated", "FAILED_PROTOCOL_NO_TOOLS", true],
      ollama
        ? ["required_malformed", "endpoint_failed", "FAILED_BUDGET_EXHAUSTED", true]
        : ["required_malformed", "malformed_output", "FAILED_PROTOCOL_MALFORMED", true],
      ["required_narration", "called_tools_and_reported", "COMPLETED_WITH_TOOLS", true],
      ["forbidden_attempted_call", "called_forbidden_tool", "FAILED_CONTRACT_VIOLATION", true],
      ["oversized_output", "kept_calling_tools", "FAILED_BUDGET_EXHAUSTED", true],
      ["timeout_call", "unusable_responses", "FAILED_BUDGET_EXHAUSTED", true],
    ]);
    // Anthropic and Gemini carry arguments as objects: unparseable text arrives as arguments that are no object.
    const malformed = ollama
      ? "endpoint error (MODEL_INVALID_RESPONSE)"
      : expect.stringMatching(
          /^malformed tool call \((MALFORMED_TOOL_ARGUMENTS|TOOL_ARGUMENTS_NOT_OBJECT)\) of record_note$/,
        );
    expect(report.runs[1]!.inferences).toEqual(
      ollama ? [malformed, malformed, malformed] : [malformed, malformed],
    );
    expect(report.metrics).toMatchObject({
      runs: 6,
      // The narration and oversized cases executed a tool; the other three required runs did not.
      noToolCallRate: 3 / 5,
      parseFailureRate: ollama ? 0 : 2 / 15,
      inferencesPerRun: ollama ? { average: 16 / 6, p95: 6 } : { average: 15 / 6, p95: 6 },
      budgetExhaustedExits: ollama ? 3 : 2,
    });
  });
});
