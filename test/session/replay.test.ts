import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ExecutionContract } from "../../src/contract/execution-contract.js";
import { replayRecordedRun } from "../../src/runner/replay-recorded-run.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { call, report, runScripted, type ScriptedRunOptions } from "./session-harness.js";

async function recordAndReplay(options: ScriptedRunOptions, tamper?: (raw: Map<string, string>) => void) {
  const run = await runScripted(options);
  const raw = new Map(run.writer.raw);
  tamper?.(raw);
  const replay = await replayRecordedRun({
    header: run.writer.header!,
    contract: run.writer.contract as ExecutionContract,
    entries: run.writer.entries,
    readRaw: async (hash) => JSON.parse(raw.get(hash) ?? "null"),
  });
  return { run, replay };
}

describe("replay of a recorded run (seed 002 Phase 3)", () => {
  it("reproduces the outcome class and the chain head with no model and no tools", async () => {
    const { run, replay } = await recordAndReplay({
      settings: { toolPolicy: "required", maxRetries: 3, maxToolCallsPerTurn: 1 },
      targets: 2,
      script: [
        { kind: "error", status: 503 },
        { kind: "empty" },
        { kind: "tool_calls", calls: [call("lookup", { key: "a" }), call("lookup", { key: "b" })] },
        { kind: "tool_calls", calls: [call("lookup", "{broken"), call("big", { lines: 5 })] },
        { kind: "tool_calls", calls: [report("done")] },
      ],
    });
    expect(run.result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(replay.ok).toBe(true);
    expect(replay.outcome).toBe(run.result.outcome);
    expect(replay.headHash).toBe(run.result.transcript.headHash);
    expect(replay.entries).toBe(run.writer.entries.length);
  });

  it("names the first divergent entry when the record does not match what the runtime does", async () => {
    const { run, replay } = await recordAndReplay(
      {
        script: [
          { kind: "tool_calls", calls: [call("lookup", { key: "a" })] },
          { kind: "tool_calls", calls: [report("done")] },
        ],
      },
      (raw) => {
        // Change what the model said in the second response, leaving the transcript untouched.
        for (const [hash, text] of raw) {
          if (text.includes("model_response") && text.includes("done"))
            raw.set(hash, text.replaceAll("done", "gone"));
        }
      },
    );
    expect(run.result.success).toBe(true);
    expect(replay.ok).toBe(false);
    const secondInfer = run.writer.entries.filter((entry) => entry.state === "INFER")[1]!;
    expect(replay.divergence).toMatchObject({ seq: secondInfer.seq, reason: "RESULT_MISMATCH" });
  });

  it("replays interrupted and failed runs too", async () => {
    const controller = new AbortController();
    const interrupted = await recordAndReplay({
      signal: controller.signal,
      respond: () => {
        setImmediate(() => controller.abort());
        return { kind: "tool_calls", calls: [call("hang", {})] };
      },
    });
    expect(interrupted.run.result.outcome).toBe("INTERRUPTED");
    expect(interrupted.replay).toMatchObject({ ok: true, outcome: "INTERRUPTED" });
    const exhausted = await recordAndReplay({
      settings: { maxTurns: 2 },
      script: [
        { kind: "tool_calls", calls: [call("lookup", { key: "1" })] },
        { kind: "tool_calls", calls: [call("lookup", { key: "2" })] },
      ],
    });
    expect(exhausted.replay).toMatchObject({ ok: true, outcome: "FAILED_BUDGET_EXHAUSTED" });
  });

  it("any recorded run replays to the same head (property)", async () => {
    const step: fc.Arbitrary<ScriptedStep> = fc.oneof(
      fc.constant({ kind: "tool_calls" as const, calls: [call("lookup", { key: "k" })] }),
      fc.constant({ kind: "tool_calls" as const, calls: [call("lookup", "{bad")] }),
      fc.constant({ kind: "tool_calls" as const, calls: [call("unknown_tool", {})] }),
      fc.constant({ kind: "text" as const, text: "prose" }),
      fc.constant({ kind: "empty" as const }),
      fc.constantFrom(429, 500, 401).map((status) => ({ kind: "error" as const, status })),
      fc.constant({ kind: "tool_calls" as const, calls: [report("r")] }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 10 }),
        fc.constantFrom("required" as const, "optional" as const),
        async (steps, toolPolicy) => {
          const { run, replay } = await recordAndReplay({
            settings: { toolPolicy, maxTurns: 4, maxRetries: 2 },
            respond: (_request, index) => steps[index] ?? { kind: "tool_calls", calls: [report("fallback")] },
          });
          expect(replay.ok).toBe(true);
          expect(replay.outcome).toBe(run.result.outcome);
          expect(replay.headHash).toBe(run.result.transcript.headHash);
        },
      ),
      { numRuns: 60, seed: 4242 },
    );
  });
});
