import { describe, expect, it } from "vitest";
import {
  checkTranscriptInvariants,
  type RecordedConformanceRun,
} from "../../src/conformance/check-transcript-invariants.js";
import { createConformanceTools } from "../../src/conformance/conformance-tools.js";
import { runConformanceCorpus } from "../../src/conformance/run-conformance-corpus.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { prepareAgent } from "../../src/runner/prepare-agent.js";
import { createStrictScriptedModel } from "../../src/testing/strict-scripted-model.js";
import { createInMemoryTranscriptWriter } from "../../src/transcript/in-memory-transcript-writer.js";
import type { TranscriptEntry } from "../../src/transcript/transcript-entry.js";
import { wellBehavedModel } from "./conformance-scripts.js";

const target = { provider: "scripted", model: "strict-scripted-model", contextWindow: 32_000 };

/** A real run of the first case (a valid call, then a report), with everything it recorded. */
async function recordedRun(): Promise<RecordedConformanceRun> {
  const environment = deterministicEnvironment();
  const model = createStrictScriptedModel({ script: wellBehavedModel.slice(0, 2), environment });
  const agent = prepareAgent({
    agent: { id: "judge", systemPrompt: "Look orders up.", settings: { toolPolicy: "required" } },
    targets: [target],
    models: [model],
    tools: [createConformanceTools({ executions: [] }).lookupOrder],
    environment,
  });
  const writer = createInMemoryTranscriptWriter();
  const { result } = await agent.run({ prompt: "Order 42?", transcriptWriter: writer });
  expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
  return {
    result,
    header: writer.header!,
    contract: writer.contract,
    entries: [...writer.entries],
    raw: writer.raw,
  };
}

describe("the conformance judge", () => {
  it("finds nothing wrong with an untouched run", async () => {
    expect(checkTranscriptInvariants(await recordedRun(), "required")).toEqual([]);
  });

  it("names an entry whose content was changed after it was written", async () => {
    const run = await recordedRun();
    const entries = run.entries.map((entry) =>
      entry.state === "TERMINATE"
        ? { ...entry, result: { ...(entry.result as object), outcome: "FAILED_TIMEOUT" } }
        : entry,
    );
    const problems = checkTranscriptInvariants({ ...run, entries }, "required");
    expect(problems).toContainEqual(
      expect.stringMatching(/^the hash chain does not verify: RESULT_HASH_MISMATCH at seq 11/),
    );
    expect(problems).toContain(
      "the result says COMPLETED_WITH_TOOLS but the TERMINATE entry says FAILED_TIMEOUT",
    );
  });

  it("names a turn that skipped a state and a call that ran without validation", async () => {
    const run = await recordedRun();
    const withoutValidation = run.entries.filter(
      (entry) => !(entry.state === "VALIDATE_CALLS" && entry.turn === 1),
    );
    const problems = checkTranscriptInvariants({ ...run, entries: withoutValidation }, "required");
    expect(problems).toContain(
      "turn 1 walks INFER EXECUTE OBSERVE COMMIT instead of INFER+ VALIDATE_CALLS EXECUTE OBSERVE COMMIT",
    );
    expect(problems).toContainEqual(
      expect.stringMatching(/^call .* \(lookup_order\) executed without passing VALIDATE_CALLS$/),
    );
  });

  it("names a success that carries no executed tool under required, and a tool that ran under forbidden", async () => {
    const run = await recordedRun();
    const noExecution = run.entries.map(
      (entry): TranscriptEntry => (entry.state === "EXECUTE" ? { ...entry, result: { results: [] } } : entry),
    );
    expect(checkTranscriptInvariants({ ...run, entries: noExecution }, "required")).toContain(
      "the run succeeded under a required tool policy without executing a tool",
    );
    expect(checkTranscriptInvariants(run, "forbidden")).toContain(
      "tools executed under a forbidden tool policy: lookup_order",
    );
  });

  it("fails every run whose outcome is not the one the contract prescribes and an interrupted pass", async () => {
    const controller = new AbortController();
    controller.abort();
    const report = await runConformanceCorpus({
      target,
      model: createStrictScriptedModel({ script: [] }),
      environment: deterministicEnvironment(),
      cases: ["required_valid_call", "forbidden_attempted_call"],
      signal: controller.signal,
    });
    expect(report.passed).toBe(false);
    expect(report.runs.map((run) => [run.outcome, run.passed])).toEqual([
      ["INTERRUPTED", false],
      ["INTERRUPTED", false],
    ]);
    expect(report.runs[0]!.problems[0]).toBe(
      "the run was interrupted (the pass was cancelled), so what the model did was not judged",
    );
  });
});
