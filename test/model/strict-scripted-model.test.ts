import { afterEach, describe, expect, it } from "vitest";
import { systemMessage, userMessage } from "../../src/contract/agent-message.js";
import { CharterError } from "../../src/foundation/charter-error.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { ModelCallError } from "../../src/model/model-call-error.js";
import type { ModelRequest, ModelResponse } from "../../src/model/model-client.js";
import { createOpenAICompatibleModelClient } from "../../src/model/providers/openai-compatible-model-client.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { delayStep, type ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { createStrictScriptedModel } from "../../src/testing/strict-scripted-model.js";
import { nullParameters } from "./provider-fixtures.js";

const start = Date.UTC(2026, 0, 1);

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [systemMessage("system prompt"), userMessage("hello")],
    tools: [],
    toolChoice: "auto",
    parameters: nullParameters,
    ...overrides,
  };
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

let server: ScriptedOpenAIServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

describe("createStrictScriptedModel", () => {
  it("answers the script in order and records the very request objects", async () => {
    const model = createStrictScriptedModel({
      script: [
        { kind: "text", text: "hi", reasoning: "polite" },
        {
          kind: "tool_calls",
          calls: [
            { name: "search", arguments: { q: "x" } },
            { id: "own", name: "bad", arguments: "{" },
          ],
        },
        { kind: "empty" },
        { kind: "reasoning_only", reasoning: "hmm" },
      ],
    });
    const requests = [request(), request(), request(), request()];
    const first = await model.generate(requests[0]!);
    expect(first).toMatchObject({
      text: "hi",
      reasoning: "polite",
      toolCalls: [],
      finishReason: "stop",
      responseId: "chatcmpl-1",
    });
    const second = await model.generate(requests[1]!);
    expect(second.toolCalls).toEqual([
      { id: "call_2_0", name: "search", argumentsText: '{"q":"x"}' },
      { id: "own", name: "bad", argumentsText: "{" },
    ]);
    expect(second.finishReason).toBe("tool-calls");
    expect(await model.generate(requests[2]!)).toMatchObject({ text: "", reasoning: "", toolCalls: [] });
    expect(await model.generate(requests[3]!)).toMatchObject({ text: "", reasoning: "hmm", toolCalls: [] });
    expect(model.requests).toHaveLength(4);
    for (const [index, recorded] of model.requests.entries()) expect(recorded).toBe(requests[index]);
    expect(model.remaining()).toBe(0);
    model.assertConsumed();
  });

  it("reports usage from the step, or estimates it", async () => {
    const model = createStrictScriptedModel({
      script: [
        { kind: "text", text: "x", usage: { prompt_tokens: 77, completion_tokens: 3 } },
        { kind: "text", text: "abcdefgh" },
      ],
    });
    expect((await model.generate(request())).usage).toEqual({ inputTokens: 77, outputTokens: 3 });
    expect((await model.generate(request())).usage).toEqual({
      inputTokens: Math.ceil(("system prompt".length + "hello".length) / 4),
      outputTokens: 2,
    });
  });

  it("rejects an unexpected call after the script with INTERNAL_ERROR naming the call", async () => {
    const model = createStrictScriptedModel({ script: [{ kind: "text", text: "only" }] });
    await model.generate(request());
    const error = await rejectionOf(model.generate(request()));
    expect(CharterError.isInstance(error)).toBe(true);
    expect((error as CharterError).code).toBe("INTERNAL_ERROR");
    expect((error as CharterError).details).toEqual({ callIndex: 1, scriptLength: 1 });
  });

  it("assertConsumed fails while steps remain", () => {
    const model = createStrictScriptedModel({
      script: [
        { kind: "text", text: "a" },
        { kind: "text", text: "b" },
      ],
    });
    expect(model.remaining()).toBe(2);
    let caught: unknown;
    try {
      model.assertConsumed();
    } catch (error) {
      caught = error;
    }
    expect((caught as CharterError).code).toBe("INTERNAL_ERROR");
    expect((caught as CharterError).details).toEqual({ consumed: 0, scriptLength: 2 });
  });

  it("turns disconnect and raw steps into network and invalid_response errors", async () => {
    const model = createStrictScriptedModel({
      script: [{ kind: "disconnect" }, { kind: "raw", body: "{nope" }],
    });
    expect(await rejectionOf(model.generate(request()))).toMatchObject({
      errorClass: "network",
      code: "MODEL_NETWORK_ERROR",
    });
    expect(await rejectionOf(model.generate(request()))).toMatchObject({ errorClass: "invalid_response" });
  });

  it("waits out a delay step on the injected environment, then answers", async () => {
    const environment = deterministicEnvironment({ start });
    const model = createStrictScriptedModel({
      script: [delayStep(2_500, { kind: "text", text: "late" })],
      environment,
    });
    expect((await model.generate(request())).text).toBe("late");
    expect(environment.slept).toEqual([2_500]);
  });

  it("rejects as aborted when the request's signal has fired", async () => {
    const controller = new AbortController();
    controller.abort();
    const model = createStrictScriptedModel({ script: [{ kind: "text", text: "unused" }] });
    const error = await rejectionOf(model.generate(request({ abortSignal: controller.signal })));
    expect(error).toMatchObject({ errorClass: "aborted", code: "INTERRUPTED" });
  });

  it("asks a respond function when given one", async () => {
    const model = createStrictScriptedModel({
      respond: (received, index) => ({ kind: "text", text: `${index}:${received.messages.length}` }),
    });
    expect((await model.generate(request())).text).toBe("0:2");
    expect((await model.generate(request())).text).toBe("1:2");
    expect(model.remaining()).toBe(0);
    model.assertConsumed();
  });
});

describe("createStrictScriptedModel matches the HTTP client on the same steps", () => {
  async function viaHttp(step: ScriptedStep) {
    server = await startScriptedOpenAIServer({ script: [step] });
    const client = createOpenAICompatibleModelClient({
      providerName: "scripted",
      baseUrl: server.baseUrl,
      model: "strict-scripted-model",
      environment: deterministicEnvironment({ start }),
    });
    const outcome = await client.generate(request()).then(
      (response) => ({ response }),
      (error: unknown) => ({ error }),
    );
    await server.close();
    server = null;
    return outcome;
  }

  function viaStrictModel(step: ScriptedStep) {
    const model = createStrictScriptedModel({
      script: [step],
      environment: deterministicEnvironment({ start }),
    });
    return model.generate(request()).then(
      (response) => ({ response }),
      (error: unknown) => ({ error }),
    );
  }

  it.each<[string, ScriptedStep]>([
    ["401", { kind: "error", status: 401 }],
    ["402", { kind: "error", status: 402 }],
    [
      "429 quota",
      { kind: "error", status: 429, body: { error: { message: "q", code: "insufficient_quota" } } },
    ],
    ["429 Retry-After seconds", { kind: "error", status: 429, headers: { "Retry-After": "9" } }],
    [
      "429 Retry-After date",
      { kind: "error", status: 429, headers: { "Retry-After": new Date(start + 4_000).toUTCString() } },
    ],
    ["500", { kind: "error", status: 500 }],
    ["503", { kind: "error", status: 503 }],
    ["400", { kind: "error", status: 400 }],
    ["disconnect", { kind: "disconnect" }],
    ["unparseable 200", { kind: "raw", body: "{" }],
  ])("error step %s", async (_label, step) => {
    const http = await viaHttp(step);
    const strict = await viaStrictModel(step);
    expect("error" in http && "error" in strict).toBe(true);
    const httpError = (http as { error: ModelCallError }).error;
    const strictError = (strict as { error: ModelCallError }).error;
    expect(ModelCallError.isModelCallError(strictError)).toBe(true);
    expect({
      errorClass: strictError.errorClass,
      code: strictError.code,
      statusCode: strictError.statusCode,
      retryAfterMs: strictError.retryAfterMs,
      isFatal: strictError.isFatal,
    }).toEqual({
      errorClass: httpError.errorClass,
      code: httpError.code,
      statusCode: httpError.statusCode,
      retryAfterMs: httpError.retryAfterMs,
      isFatal: httpError.isFatal,
    });
  });

  it.each<[string, ScriptedStep]>([
    ["text", { kind: "text", text: "hello", reasoning: "why" }],
    [
      "tool calls",
      {
        kind: "tool_calls",
        text: "t",
        calls: [
          { name: "a", arguments: { x: 1 } },
          { name: "b", arguments: "{oops" },
        ],
      },
    ],
    ["empty", { kind: "empty" }],
    ["reasoning only", { kind: "reasoning_only", reasoning: "r" }],
    ["length", { kind: "text", text: "cut", finishReason: "length" }],
  ])("answer step %s", async (_label, step) => {
    const http = await viaHttp(step);
    const strict = await viaStrictModel(step);
    const pick = (outcome: { response: ModelResponse } | { error: unknown }) => {
      expect(outcome).toHaveProperty("response");
      const { response } = outcome as { response: ModelResponse };
      return {
        text: response.text,
        reasoning: response.reasoning,
        toolCalls: response.toolCalls,
        finishReason: response.finishReason,
        responseId: response.responseId,
      };
    };
    expect(pick(strict)).toEqual(pick(http));
  });
});
