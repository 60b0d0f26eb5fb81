import { APICallError, InvalidPromptError, InvalidResponseDataError } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { classifyHttpFailure, classifyModelError } from "../../src/model/classify-model-error.js";
import { ModelCallError } from "../../src/model/model-call-error.js";
import { classifyAiSdkError } from "../../src/model/providers/classify-ai-sdk-error.js";

const now = Date.UTC(2026, 0, 1);

function apiCallError(fields: Partial<ConstructorParameters<typeof APICallError>[0]>): APICallError {
  return new APICallError({
    message: "irrelevant",
    url: "http://127.0.0.1/v1",
    requestBodyValues: {},
    ...fields,
  });
}

function withCode(code: string): Error {
  return Object.assign(new Error("irrelevant"), { code });
}

describe("classifyModelError", () => {
  it("prefers the caller's abort over anything else the error says", () => {
    const error = classifyModelError(apiCallError({ statusCode: 500 }), { now, abortedByCaller: true });
    expect(error.errorClass).toBe("aborted");
  });

  it("classifies the client timeout as timeout", () => {
    expect(classifyModelError(new Error("x"), { now, timedOut: true }).errorClass).toBe("timeout");
  });

  it("passes a ModelCallError through unchanged", () => {
    const original = new ModelCallError("quota", "already classified");
    expect(classifyModelError(original, { now })).toBe(original);
  });

  it("finds network codes along the cause chain", () => {
    const error = new TypeError("fetch failed", { cause: withCode("ECONNREFUSED") });
    expect(classifyModelError(error, { now })).toMatchObject({
      errorClass: "network",
      code: "MODEL_NETWORK_ERROR",
    });
  });

  it("names the URL and the host that did not resolve (ENOTFOUND), in the message and in details", () => {
    // The shape Node gives a failed DNS lookup, under the AI SDK's error for the request.
    const lookup = Object.assign(new Error("getaddrinfo ENOTFOUND api.example.invalid"), {
      code: "ENOTFOUND",
      syscall: "getaddrinfo",
      hostname: "api.example.invalid",
    });
    const error = classifyAiSdkError(
      apiCallError({ url: "https://api.example.invalid/v1/chat/completions", cause: lookup }),
      { now, target: "remote/m" },
    );
    expect(error.message).toBe(
      "model call to remote/m could not reach https://api.example.invalid/v1/chat/completions (ENOTFOUND api.example.invalid)",
    );
    expect(error.details).toMatchObject({
      errorClass: "network",
      url: "https://api.example.invalid/v1/chat/completions",
      networkCause: "ENOTFOUND api.example.invalid",
    });
  });

  it("without a system error code, names the transport's own reason (fetch refusing a port)", () => {
    const error = classifyAiSdkError(
      apiCallError({ url: "http://127.0.0.1:9/v1/chat/completions", cause: new Error("bad port") }),
      { now },
    );
    expect(error.message).toBe(
      "model call could not reach http://127.0.0.1:9/v1/chat/completions (bad port)",
    );
  });

  it("treats undici header and body timeouts as timeouts", () => {
    const error = apiCallError({ cause: withCode("UND_ERR_HEADERS_TIMEOUT") });
    expect(classifyModelError(error, { now }).errorClass).toBe("timeout");
  });

  it("treats a success whose body broke off as a network error, not an invalid response", () => {
    const error = apiCallError({ statusCode: 200, cause: withCode("ECONNRESET") });
    expect(classifyModelError(error, { now }).errorClass).toBe("network");
  });

  it("reads HTTP facts from any error that carries them, not only the AI SDK's", () => {
    const error = Object.assign(new Error("irrelevant"), { statusCode: 403, responseHeaders: {} });
    expect(classifyModelError(error, { now })).toMatchObject({ errorClass: "auth", statusCode: 403 });
  });

  it("treats a failure without an HTTP answer as a network error when the transport says so", () => {
    expect(classifyModelError(new Error("x"), { now, noHttpAnswer: true }).errorClass).toBe("network");
  });

  it("reads the parsed error body and the raw body text alike", () => {
    const parsed = apiCallError({
      statusCode: 429,
      data: { error: { message: "m", code: "insufficient_quota" } },
    });
    const text = apiCallError({ statusCode: 429, responseBody: '{"error":{"type":"insufficient_quota"}}' });
    expect(classifyModelError(parsed, { now }).errorClass).toBe("quota");
    expect(classifyModelError(text, { now }).errorClass).toBe("quota");
  });

  it("reads Retry-After from the response headers", () => {
    const error = apiCallError({ statusCode: 429, responseHeaders: { "retry-after": "3" } });
    expect(classifyModelError(error, { now })).toMatchObject({
      errorClass: "rate_limit",
      retryAfterMs: 3_000,
    });
  });

  it("maps TimeoutError and AbortError by name", () => {
    expect(classifyModelError(new DOMException("t", "TimeoutError"), { now }).errorClass).toBe("timeout");
    expect(classifyModelError(new DOMException("a", "AbortError"), { now }).errorClass).toBe("aborted");
  });

  it("keeps an unknown failure retryable as bad_request, with its cause", () => {
    const cause = new RangeError("boom");
    const error = classifyModelError(cause, { now, target: "p/m" });
    expect(error).toMatchObject({ errorClass: "bad_request", isRetryable: true, isFatal: false });
    expect(error.cause).toBe(cause);
  });
});

describe("classifyAiSdkError", () => {
  it("maps AI SDK response errors to invalid_response and prompt errors to bad_request", () => {
    const invalid = new InvalidResponseDataError({ data: {}, message: "no choices" });
    const prompt = new InvalidPromptError({ prompt: [], message: "bad prompt" });
    expect(classifyAiSdkError(invalid, { now }).errorClass).toBe("invalid_response");
    expect(classifyAiSdkError(prompt, { now }).errorClass).toBe("bad_request");
  });

  it("treats an APICallError without status or code as a network error", () => {
    expect(classifyAiSdkError(apiCallError({}), { now }).errorClass).toBe("network");
  });

  it("still lets the caller's abort win", () => {
    const invalid = new InvalidResponseDataError({ data: {}, message: "no choices" });
    expect(classifyAiSdkError(invalid, { now, abortedByCaller: true }).errorClass).toBe("aborted");
  });

  it("classifies an unparseable success body as invalid_response", () => {
    const error = apiCallError({ statusCode: 200, responseBody: "{not json" });
    expect(classifyAiSdkError(error, { now }).errorClass).toBe("invalid_response");
  });
});

describe("classifyHttpFailure", () => {
  it("keeps the status and the body for the transcript", () => {
    const body = { error: { message: "nope", type: "invalid_request_error", code: "invalid_api_key" } };
    const error = classifyHttpFailure({ statusCode: 401, body, now });
    expect(error).toMatchObject({ errorClass: "auth", statusCode: 401, rawResponse: body, isFatal: true });
  });
});
