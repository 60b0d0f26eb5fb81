import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ExecutionContract } from "../../src/contract/execution-contract.js";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";
import { replayRecordedRun } from "../../src/runner/replay-recorded-run.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { createHashChainTranscript } from "../../src/transcript/hash-chain-transcript.js";
import type { TranscriptEntry, TranscriptHeader } from "../../src/transcript/transcript-entry.js";
import { verifyEntries } from "../../src/transcript/verify-transcript.js";
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

/** The entries hashed into a fresh chain after `change`: a forged record whose chain is intact. */
function rechained(
  header: TranscriptHeader,
  entries: readonly TranscriptEntry[],
  change: (entry: TranscriptEntry) => TranscriptEntry,
): readonly TranscriptEntry[] {
  const chain = createHashChainTranscript({
    runId: header.run_id,
    contractHash: header.contract_hash,
    adapterVersion: header.adapter_version,
    modelProfileId: header.model_profile_id,
    redactor: new SecretRedactor(),
    keepEntries: true,
  });
  for (const entry of entries.map(change)) {
    const { state, step_id, turn, timestamp, action, result, model_fingerprint } = entry;
    chain.append({ state, step_id, turn, timestamp, action, result, model_fingerprint });
  }
  return chain.entries;
}

// seed 002 Phase 3
describe("replay of a recorded run", () => {
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

  it("looks each response up by the hash of the request the replay builds: a record answering another request fails", async () => {
    const run = await runScripted({
      script: [
        { kind: "tool_calls", calls: [call("lookup", { key: "a" })] },
        { kind: "tool_calls", calls: [report("done")] },
      ],
    });
    const header = run.writer.header!;
    const inferences = run.writer.entries.filter((entry) => entry.state === "INFER");
    expect(
      inferences.every(
        (entry) => typeof (entry.action as { request_hash?: unknown }).request_hash === "string",
      ),
    ).toBe(true);
    // The same responses under another task: the first request the session builds is not the recorded one. The
    // chain is rebuilt, so the record verifies; only the requests give the forgery away.
    const forged = rechained(header, run.writer.entries, (entry) => {
      if (entry.state !== "PRECHECK") return entry;
      const action = entry.action as { conversation: { role: string; content: string }[] };
      return {
        ...entry,
        action: {
          ...action,
          conversation: action.conversation.map((message) =>
            message.role === "user" ? { ...message, content: "Do another task." } : message,
          ),
        },
      };
    });
    expect(verifyEntries(header, run.writer.contract, forged, run.writer.raw)).toMatchObject({ ok: true });
    const replay = await replayRecordedRun({
      header,
      contract: run.writer.contract as ExecutionContract,
      entries: forged,
      readRaw: async (hash) => JSON.parse(run.writer.raw.get(hash) ?? "null"),
    });
    const firstInfer = forged.find((entry) => entry.state === "INFER")!;
    const recordedRequestHash = (firstInfer.action as { request_hash: string }).request_hash;
    expect(replay.ok).toBe(false);
    expect(replay.divergence).toMatchObject({
      seq: firstInfer.seq,
      step_id: firstInfer.step_id,
      reason: "REQUEST_MISMATCH",
      details: { recordedRequestHash },
    });
    expect(replay.divergence?.details?.replayedRequestHash).toMatch(/^[0-9a-f]{64}$/);
    expect(replay.divergence?.details?.replayedRequestHash).not.toBe(recordedRequestHash);
  });

  it("still replays a record written before INFER entries carried their request hash, in record order", async () => {
    const run = await runScripted({
      script: [
        { kind: "tool_calls", calls: [call("lookup", { key: "a" })] },
        { kind: "tool_calls", calls: [report("done")] },
      ],
    });
    const header = run.writer.header!;
    const legacy = rechained(header, run.writer.entries, (entry) => {
      if (entry.state !== "INFER") return entry;
      const { request_hash: _dropped, ...action } = entry.action as { request_hash: string };
      return { ...entry, action };
    });
    const replay = await replayRecordedRun({
      header,
      contract: run.writer.contract as ExecutionContract,
      entries: legacy,
      readRaw: async (hash) => JSON.parse(run.writer.raw.get(hash) ?? "null"),
    });
    expect(replay).toMatchObject({
      ok: true,
      outcome: "COMPLETED_WITH_TOOLS",
      headHash: legacy.at(-1)?.hash,
    });
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
