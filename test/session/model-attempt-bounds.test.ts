import { describe, expect, it } from "vitest";
import type { LlmAccountingEntry } from "../../src/session/accounting-entry.js";
import { delayStep } from "../../src/testing/scripted-openai-step.js";
import { runScripted } from "./session-harness.js";

const llmEntries = (accounting: readonly { type: string }[]) =>
  accounting.filter((entry): entry is LlmAccountingEntry => entry.type === "llm");

describe("modelTimeout bounds each model attempt", () => {
  it("an endpoint that never answers fails the attempt as MODEL_TIMEOUT, and the next target answers", async () => {
    const run = await runScripted({
      targets: 2,
      // A tiny timeout for the first target (as its provider configuration would set it) on a real loopback server
      // that holds the request for an hour: no long real wait. The second target keeps the agent's minute.
      settings: { modelTimeout: 60_000 },
      targetParameters: [{ modelTimeout: 100 }],
      // Answered by target, not by arrival order: a request the timeout cut before it reached the server must not
      // shift the script onto the other target.
      respond: (request) =>
        request.model === "m0"
          ? delayStep(3_600_000, { kind: "text", text: "too late" })
          : { kind: "text", text: "answer" },
    });
    const attempts = llmEntries(run.result.accounting);
    expect(attempts.map((entry) => [entry.model, entry.status, entry.errorCode ?? null])).toEqual([
      ["m0", "failed", "MODEL_TIMEOUT"],
      ["m1", "ok", null],
    ]);
    expect(run.result.outcome).toBe("COMPLETED_CHAT_ONLY");
    expect(run.result.finalReport).toMatchObject({ content: "answer" });
    expect(run.contract.model_targets.map((target) => target.model_timeout_ms)).toEqual([100, 60_000]);
    expect(run.verification.ok).toBe(true);
  });

  it("every attempt timing out ends the run FAILED_BUDGET_EXHAUSTED, never hanging", async () => {
    const hang = delayStep(3_600_000, { kind: "text", text: "too late" });
    const run = await runScripted({
      settings: { modelTimeout: 50, maxRetries: 2 },
      script: [hang, hang],
    });
    expect(run.result.outcome).toBe("FAILED_BUDGET_EXHAUSTED");
    expect(run.result.error?.code).toBe("MODEL_ATTEMPTS_EXHAUSTED");
    expect(llmEntries(run.result.accounting).map((entry) => entry.errorCode)).toEqual([
      "MODEL_TIMEOUT",
      "MODEL_TIMEOUT",
    ]);
  });
});

describe("modelResponseMaxBytes refuses a model response over the limit", () => {
  const huge = { kind: "text" as const, text: "x".repeat(300_000) };

  for (const stream of [false, true]) {
    it(`fails the attempt as MODEL_RESPONSE_TOO_LARGE and moves on (${stream ? "streamed" : "not streamed"})`, async () => {
      const run = await runScripted({
        targets: 2,
        settings: { modelResponseMaxBytes: 100_000, stream },
        script: [huge, { kind: "text", text: "small answer" }],
      });
      const attempts = llmEntries(run.result.accounting);
      expect(attempts.map((entry) => [entry.status, entry.errorCode ?? null])).toEqual([
        ["failed", "MODEL_RESPONSE_TOO_LARGE"],
        ["ok", null],
      ]);
      expect(run.result.outcome).toBe("COMPLETED_CHAT_ONLY");
      expect(run.result.finalReport).toMatchObject({ content: "small answer" });
      // Nothing of the refused answer reached the conversation.
      expect(JSON.stringify(run.result.conversation)).not.toContain("xxxxxxxxxx");
      expect(run.verification.ok).toBe(true);
    });
  }

  it("a compressed response is measured as received, not by its declared (compressed) length", async () => {
    const body = JSON.stringify({
      id: "chatcmpl-gzip",
      object: "chat.completion",
      created: 0,
      model: "m0",
      choices: [{ index: 0, message: { role: "assistant", content: huge.text }, finish_reason: "stop" }],
      usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
    });
    const run = await runScripted({
      targets: 2,
      settings: { modelResponseMaxBytes: 100_000 },
      // 300 KB of text gzip-compresses to well under the limit's 100 KB: the declared length would pass it.
      script: [
        { kind: "raw", body, gzip: true },
        { kind: "text", text: "small answer" },
      ],
    });
    expect(llmEntries(run.result.accounting).map((entry) => [entry.status, entry.errorCode ?? null])).toEqual(
      [
        ["failed", "MODEL_RESPONSE_TOO_LARGE"],
        ["ok", null],
      ],
    );
    expect(run.result.finalReport).toMatchObject({ content: "small answer" });
  });

  it("a response under the limit is accepted whole", async () => {
    const run = await runScripted({
      settings: { modelResponseMaxBytes: 1_000_000 },
      script: [huge],
    });
    expect(run.result.outcome).toBe("COMPLETED_CHAT_ONLY");
    expect(run.result.finalReport?.content).toHaveLength(300_000);
  });
});
