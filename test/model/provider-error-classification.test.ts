import { afterEach, describe, expect, it } from "vitest";
import { ModelCallError, type ModelErrorClass } from "../../src/model/model-call-error.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import {
  type ScriptedProviderServer,
  startScriptedProviderServer,
} from "../../src/testing/scripted-provider-server.js";
import type { ScriptedWireFormatName } from "../../src/testing/scripted-wire-format.js";
import { clientFor, clockStart, type ProviderCase, providerCases, request } from "./provider-fixtures.js";

let server: ScriptedProviderServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

interface ErrorCase {
  readonly errorClass: ModelErrorClass;
  readonly what: string;
  readonly step: ScriptedStep;
  readonly retryAfterMs?: number | null;
}

const openAIError = (type: string, code: string | null) => ({
  error: { message: "scripted", type, param: null, code },
});
const anthropicError = (type: string) => ({ type: "error", error: { type, message: "scripted" } });
const googleError = (code: number, status: string, details: unknown[] = []) => ({
  error: { code, message: "scripted", status, details },
});
const ollamaError = { error: "scripted" };
const openRouterError = (code: number, metadata?: Record<string, unknown>) => ({
  error: { code, message: "scripted", ...(metadata === undefined ? {} : { metadata }) },
});

/** The classes every provider shares, for errors whose body carries nothing the status does not say. */
function sharedCases(body: (status: number) => Record<string, unknown>): ErrorCase[] {
  return [
    { errorClass: "auth", what: "HTTP 401", step: { kind: "error", status: 401, body: body(401) } },
    { errorClass: "auth", what: "HTTP 403", step: { kind: "error", status: 403, body: body(403) } },
    { errorClass: "server", what: "HTTP 500", step: { kind: "error", status: 500, body: body(500) } },
    { errorClass: "server", what: "HTTP 503", step: { kind: "error", status: 503, body: body(503) } },
    { errorClass: "bad_request", what: "HTTP 400", step: { kind: "error", status: 400, body: body(400) } },
    { errorClass: "bad_request", what: "HTTP 404", step: { kind: "error", status: 404, body: body(404) } },
    { errorClass: "network", what: "a broken connection", step: { kind: "disconnect" } },
    {
      errorClass: "invalid_response",
      what: "an unparseable 200 body",
      step: { kind: "raw", body: "{not json" },
    },
  ];
}

const openAICases: ErrorCase[] = [
  ...sharedCases((status) => openAIError("scripted_error", String(status))),
  {
    errorClass: "quota",
    what: "429 insufficient_quota",
    step: { kind: "error", status: 429, body: openAIError("insufficient_quota", "insufficient_quota") },
  },
  { errorClass: "quota", what: "HTTP 402", step: { kind: "error", status: 402 } },
  {
    errorClass: "rate_limit",
    what: "429 with retry-after-ms",
    step: {
      kind: "error",
      status: 429,
      body: openAIError("requests", "rate_limit_exceeded"),
      headers: { "retry-after-ms": "1500" },
    },
    retryAfterMs: 1500,
  },
  { errorClass: "timeout", what: "HTTP 408", step: { kind: "error", status: 408 } },
];

const casesByWire: Readonly<Record<ScriptedWireFormatName, readonly ErrorCase[]>> = {
  "openai-chat": openAICases,
  "openai-responses": openAICases,
  anthropic: [
    ...sharedCases(() => anthropicError("api_error")).filter((testCase) => testCase.step.kind !== "error"),
    {
      errorClass: "auth",
      what: "authentication_error",
      step: { kind: "error", status: 401, body: anthropicError("authentication_error") },
    },
    {
      errorClass: "auth",
      what: "permission_error",
      step: { kind: "error", status: 403, body: anthropicError("permission_error") },
    },
    {
      errorClass: "quota",
      what: "billing_error",
      step: { kind: "error", status: 402, body: anthropicError("billing_error") },
    },
    {
      errorClass: "rate_limit",
      what: "rate_limit_error with retry-after",
      step: {
        kind: "error",
        status: 429,
        body: anthropicError("rate_limit_error"),
        headers: { "retry-after": "7" },
      },
      retryAfterMs: 7000,
    },
    {
      errorClass: "rate_limit",
      what: "rate_limit_error with only the exhausted limit's reset time",
      step: {
        kind: "error",
        status: 429,
        body: anthropicError("rate_limit_error"),
        headers: {
          "anthropic-ratelimit-requests-remaining": "12",
          "anthropic-ratelimit-requests-reset": new Date(clockStart + 50_000).toISOString(),
          "anthropic-ratelimit-tokens-remaining": "0",
          "anthropic-ratelimit-tokens-reset": new Date(clockStart + 20_000).toISOString(),
        },
      },
      retryAfterMs: 20_000,
    },
    {
      errorClass: "server",
      what: "529 overloaded_error",
      step: { kind: "error", status: 529, body: anthropicError("overloaded_error") },
    },
    {
      errorClass: "server",
      what: "500 api_error",
      step: { kind: "error", status: 500, body: anthropicError("api_error") },
    },
    {
      errorClass: "timeout",
      what: "504 timeout_error",
      step: { kind: "error", status: 504, body: anthropicError("timeout_error") },
    },
    {
      errorClass: "bad_request",
      what: "invalid_request_error",
      step: { kind: "error", status: 400, body: anthropicError("invalid_request_error") },
    },
    {
      errorClass: "bad_request",
      what: "413 request_too_large",
      step: { kind: "error", status: 413, body: anthropicError("request_too_large") },
    },
    {
      errorClass: "bad_request",
      what: "not_found_error",
      step: { kind: "error", status: 404, body: anthropicError("not_found_error") },
    },
  ],
  google: [
    ...sharedCases(() => googleError(500, "INTERNAL")).filter((testCase) => testCase.step.kind !== "error"),
    {
      errorClass: "auth",
      what: "401 UNAUTHENTICATED",
      step: { kind: "error", status: 401, body: googleError(401, "UNAUTHENTICATED") },
    },
    {
      errorClass: "auth",
      what: "403 PERMISSION_DENIED",
      step: { kind: "error", status: 403, body: googleError(403, "PERMISSION_DENIED") },
    },
    {
      errorClass: "auth",
      what: "400 INVALID_ARGUMENT with reason API_KEY_INVALID",
      step: {
        kind: "error",
        status: 400,
        body: googleError(400, "INVALID_ARGUMENT", [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "API_KEY_INVALID",
            domain: "googleapis.com",
          },
        ]),
      },
    },
    {
      errorClass: "rate_limit",
      what: "429 RESOURCE_EXHAUSTED with RetryInfo",
      step: {
        kind: "error",
        status: 429,
        body: googleError(429, "RESOURCE_EXHAUSTED", [
          {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            violations: [
              {
                quotaMetric: "generate_content_free_tier_requests",
                quotaId: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
              },
            ],
          },
          { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "37s" },
        ]),
      },
      retryAfterMs: 37_000,
    },
    {
      errorClass: "quota",
      what: "429 RESOURCE_EXHAUSTED of a per-day quota",
      step: {
        kind: "error",
        status: 429,
        body: googleError(429, "RESOURCE_EXHAUSTED", [
          {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            violations: [{ quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier" }],
          },
          { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "13s" },
        ]),
      },
    },
    {
      errorClass: "server",
      what: "503 UNAVAILABLE",
      step: { kind: "error", status: 503, body: googleError(503, "UNAVAILABLE") },
    },
    {
      errorClass: "server",
      what: "500 INTERNAL",
      step: { kind: "error", status: 500, body: googleError(500, "INTERNAL") },
    },
    {
      errorClass: "timeout",
      what: "504 DEADLINE_EXCEEDED",
      step: { kind: "error", status: 504, body: googleError(504, "DEADLINE_EXCEEDED") },
    },
    {
      errorClass: "bad_request",
      what: "400 INVALID_ARGUMENT",
      step: { kind: "error", status: 400, body: googleError(400, "INVALID_ARGUMENT") },
    },
    {
      errorClass: "bad_request",
      what: "400 FAILED_PRECONDITION",
      step: { kind: "error", status: 400, body: googleError(400, "FAILED_PRECONDITION") },
    },
  ],
  ollama: [
    ...sharedCases(() => ollamaError),
    { errorClass: "quota", what: "HTTP 402", step: { kind: "error", status: 402, body: ollamaError } },
    {
      errorClass: "rate_limit",
      what: "429 with Retry-After",
      step: { kind: "error", status: 429, body: ollamaError, headers: { "Retry-After": "2" } },
      retryAfterMs: 2000,
    },
    { errorClass: "timeout", what: "HTTP 408", step: { kind: "error", status: 408, body: ollamaError } },
  ],
  openrouter: [
    ...sharedCases((status) => openRouterError(status)).filter((testCase) => testCase.what !== "HTTP 403"),
    {
      errorClass: "auth",
      what: "403 without moderation metadata",
      step: { kind: "error", status: 403, body: openRouterError(403) },
    },
    {
      errorClass: "bad_request",
      what: "403 moderation refusal",
      step: {
        kind: "error",
        status: 403,
        body: openRouterError(403, { reasons: ["harassment"], flagged_input: "...", provider_name: "x" }),
      },
    },
    {
      errorClass: "quota",
      what: "402 insufficient credits",
      step: { kind: "error", status: 402, body: openRouterError(402) },
    },
    {
      errorClass: "rate_limit",
      what: "429 with Retry-After",
      step: { kind: "error", status: 429, body: openRouterError(429), headers: { "Retry-After": "3" } },
      retryAfterMs: 3000,
    },
    { errorClass: "timeout", what: "408", step: { kind: "error", status: 408, body: openRouterError(408) } },
    {
      errorClass: "server",
      what: "502 provider down",
      step: { kind: "error", status: 502, body: openRouterError(502) },
    },
  ],
};

const fatalClasses: readonly ModelErrorClass[] = ["auth", "quota", "aborted"];

async function failureOf(
  providerCase: ProviderCase,
  step: ScriptedStep,
  stream: boolean,
): Promise<ModelCallError> {
  server = await startScriptedProviderServer({ script: [step] });
  const error = await clientFor(providerCase, server)
    .generate(request({ stream }))
    .then(
      () => null,
      (caught: unknown) => caught,
    );
  expect(ModelCallError.isModelCallError(error)).toBe(true);
  // One request: the provider package never retries on its own, Charter's session decides.
  expect(server.requests).toHaveLength(1);
  return error as ModelCallError;
}

describe.each(providerCases)("error classification: $label", (providerCase) => {
  const cases = casesByWire[providerCase.wire];

  it("covers every class the session acts on", () => {
    const covered = new Set(cases.map((testCase) => testCase.errorClass));
    expect([...covered].sort()).toEqual(
      [
        "auth",
        "bad_request",
        "invalid_response",
        "network",
        "quota",
        "rate_limit",
        "server",
        "timeout",
      ].sort(),
    );
  });

  describe.each([false, true])("stream: %s", (stream) => {
    it.each(cases)("$what is $errorClass", async ({ errorClass, step, retryAfterMs }) => {
      const error = await failureOf(providerCase, step, stream);
      expect(error.errorClass).toBe(errorClass);
      expect(error.isFatal).toBe(fatalClasses.includes(errorClass));
      if (step.kind === "error") expect(error.statusCode).toBe(step.status);
      if (retryAfterMs !== undefined) expect(error.retryAfterMs).toBe(retryAfterMs);
      // Only a stream that had begun has something to keep.
      if (!stream || step.kind !== "raw") expect(error.partialResponse).toBeNull();
    });

    it("the caller's abort is aborted and reaches no server", async () => {
      server = await startScriptedProviderServer({ script: [{ kind: "text", text: "unused" }] });
      const controller = new AbortController();
      controller.abort();
      const error = await clientFor(providerCase, server)
        .generate(request({ stream, abortSignal: controller.signal }))
        .catch((caught: unknown) => caught);
      expect((error as ModelCallError).errorClass).toBe("aborted");
      expect(server.requests).toHaveLength(0);
    });
  });
});
