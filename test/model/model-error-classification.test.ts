import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { systemMessage, userMessage } from "../../src/contract/agent-message.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { ModelCallError } from "../../src/model/model-call-error.js";
import type { ModelRequest } from "../../src/model/model-client.js";
import { createOpenAICompatibleModelClient } from "../../src/model/providers/openai-compatible-model-client.js";
import {
  type ScriptedOpenAIServer,
  type ScriptedResponder,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { delayStep, type ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { nullParameters } from "./provider-fixtures.js";

const start = Date.UTC(2026, 0, 1);

let server: ScriptedOpenAIServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

function request(abortSignal?: AbortSignal): ModelRequest {
  return {
    messages: [systemMessage("s"), userMessage("u")],
    tools: [],
    toolChoice: "auto",
    parameters: nullParameters,
    ...(abortSignal === undefined ? {} : { abortSignal }),
  };
}

async function failureOf(
  step: ScriptedStep | ScriptedResponder,
  options: { timeoutMs?: number; abortSignal?: AbortSignal } = {},
): Promise<ModelCallError> {
  server = await startScriptedOpenAIServer(
    typeof step === "function" ? { respond: step } : { script: [step] },
  );
  const client = createOpenAICompatibleModelClient({
    providerName: "local",
    baseUrl: server.baseUrl,
    model: "m",
    environment: deterministicEnvironment({ start }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  const error = await client.generate(request(options.abortSignal)).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(ModelCallError.isModelCallError(error)).toBe(true);
  return error as ModelCallError;
}

describe("model error classification over real HTTP", () => {
  it.each([
    [401, "auth", "MODEL_AUTHENTICATION_FAILED", true],
    [403, "auth", "MODEL_AUTHENTICATION_FAILED", true],
    [402, "quota", "MODEL_QUOTA_EXCEEDED", true],
    [408, "timeout", "MODEL_TIMEOUT", false],
    [400, "bad_request", "MODEL_BAD_REQUEST", false],
    [404, "bad_request", "MODEL_BAD_REQUEST", false],
    [422, "bad_request", "MODEL_BAD_REQUEST", false],
    [500, "server", "MODEL_SERVER_ERROR", false],
    [502, "server", "MODEL_SERVER_ERROR", false],
    [503, "server", "MODEL_SERVER_ERROR", false],
  ] as const)("HTTP %i is %s", async (status, errorClass, code, isFatal) => {
    const error = await failureOf({ kind: "error", status });
    expect(error.errorClass).toBe(errorClass);
    expect(error.code).toBe(code);
    expect(error.statusCode).toBe(status);
    expect(error.isFatal).toBe(isFatal);
    expect(error.isRetryable).toBe(!isFatal);
  });

  it("429 with error.code insufficient_quota is quota, not a rate limit", async () => {
    const error = await failureOf({
      kind: "error",
      status: 429,
      body: {
        error: {
          message: "You exceeded your current quota",
          type: "insufficient_quota",
          code: "insufficient_quota",
        },
      },
      headers: { "Retry-After": "20" },
    });
    expect(error.errorClass).toBe("quota");
    expect(error.isFatal).toBe(true);
  });

  it("429 with only error.type insufficient_quota is quota too", async () => {
    const error = await failureOf({
      kind: "error",
      status: 429,
      body: { error: { message: "quota", type: "insufficient_quota" } },
    });
    expect(error.errorClass).toBe("quota");
  });

  it("429 with Retry-After in seconds is a rate limit with retryAfterMs", async () => {
    const error = await failureOf({
      kind: "error",
      status: 429,
      body: { error: { message: "slow down", type: "requests", code: "rate_limit_exceeded" } },
      headers: { "Retry-After": "12" },
    });
    expect(error.errorClass).toBe("rate_limit");
    expect(error.code).toBe("MODEL_RATE_LIMITED");
    expect(error.retryAfterMs).toBe(12_000);
    expect(error.details.retryAfterMs).toBe(12_000);
    expect(error.isFatal).toBe(false);
  });

  it("429 with Retry-After as an HTTP date is measured against the injected clock", async () => {
    const error = await failureOf({
      kind: "error",
      status: 429,
      headers: { "Retry-After": new Date(start + 30_000).toUTCString() },
    });
    expect(error.errorClass).toBe("rate_limit");
    expect(error.retryAfterMs).toBe(30_000);
  });

  it("429 with retry-after-ms uses milliseconds", async () => {
    const error = await failureOf({ kind: "error", status: 429, headers: { "retry-after-ms": "1500" } });
    expect(error.retryAfterMs).toBe(1_500);
  });

  it("429 without Retry-After has no retryAfterMs", async () => {
    const error = await failureOf({ kind: "error", status: 429 });
    expect(error.errorClass).toBe("rate_limit");
    expect(error.retryAfterMs).toBeNull();
  });

  it("a destroyed connection is a network error", async () => {
    const error = await failureOf({ kind: "disconnect" });
    expect(error.errorClass).toBe("network");
    expect(error.code).toBe("MODEL_NETWORK_ERROR");
    expect(error.statusCode).toBeNull();
  });

  it("a refused connection is a network error", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const client = createOpenAICompatibleModelClient({
      providerName: "local",
      baseUrl: `http://127.0.0.1:${port}/v1`,
      model: "m",
    });
    const error = await client.generate(request()).catch((caught: unknown) => caught);
    expect((error as ModelCallError).errorClass).toBe("network");
    // It names where it went and what the network said, in the message and in details.
    const url = `http://127.0.0.1:${port}/v1/chat/completions`;
    expect((error as ModelCallError).message).toBe(
      `model call to local/m could not reach ${url} (ECONNREFUSED 127.0.0.1:${port})`,
    );
    expect((error as ModelCallError).details).toMatchObject({
      url,
      networkCause: `ECONNREFUSED 127.0.0.1:${port}`,
    });
  });

  it("a delay beyond the client timeout is a timeout", async () => {
    const error = await failureOf(delayStep(60_000, { kind: "text", text: "late" }), { timeoutMs: 50 });
    expect(error.errorClass).toBe("timeout");
    expect(error.code).toBe("MODEL_TIMEOUT");
    expect(error.isRetryable).toBe(true);
  });

  it("the caller's abort signal is aborted, not a timeout", async () => {
    const controller = new AbortController();
    const error = await failureOf(
      () => {
        controller.abort();
        return delayStep(60_000, { kind: "text", text: "late" });
      },
      { abortSignal: controller.signal, timeoutMs: 120_000 },
    );
    expect(error.errorClass).toBe("aborted");
    expect(error.code).toBe("INTERRUPTED");
    expect(error.isRetryable).toBe(false);
  });

  it("an already aborted signal never reaches the server", async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await failureOf({ kind: "text", text: "unused" }, { abortSignal: controller.signal });
    expect(error.errorClass).toBe("aborted");
    expect(server?.requests).toHaveLength(0);
  });

  it("an unparseable 200 body is invalid_response", async () => {
    const error = await failureOf({ kind: "raw", body: "{this is not json" });
    expect(error.errorClass).toBe("invalid_response");
    expect(error.code).toBe("MODEL_INVALID_RESPONSE");
  });

  it("a 200 body that is JSON but not a chat completion is invalid_response", async () => {
    const error = await failureOf({ kind: "raw", body: JSON.stringify({ id: "x", choices: "nope" }) });
    expect(error.errorClass).toBe("invalid_response");
  });

  it("a 200 body without choices is invalid_response", async () => {
    const error = await failureOf({ kind: "raw", body: JSON.stringify({ id: "x", choices: [] }) });
    expect(error.errorClass).toBe("invalid_response");
  });

  it("an error status with a non-JSON body is still classified by status", async () => {
    const error = await failureOf({
      kind: "raw",
      status: 502,
      body: "<html>Bad gateway</html>",
      contentType: "text/html",
    });
    expect(error.errorClass).toBe("server");
    expect(error.statusCode).toBe(502);
  });
});
