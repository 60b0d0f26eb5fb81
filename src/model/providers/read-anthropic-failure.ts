import type { ModelErrorClass } from "../model-call-error.js";
import { parseRetryAfterMs } from "../parse-retry-after.js";
import { headerValue, type ProviderFailureFacts, type ProviderFailureVerdict } from "../provider-failure.js";

/** Anthropic's error types (`error.type`) and the class each one is. */
const classByErrorType: Readonly<Record<string, ModelErrorClass>> = {
  authentication_error: "auth",
  permission_error: "auth",
  billing_error: "quota",
  rate_limit_error: "rate_limit",
  overloaded_error: "server",
  api_error: "server",
  timeout_error: "timeout",
  request_too_large: "bad_request",
  invalid_request_error: "bad_request",
  not_found_error: "bad_request",
};

const rateLimitedResources = ["requests", "tokens", "input-tokens", "output-tokens"];

/**
 * The error type, from an HTTP error body (`{ type: "error", error: { type } }`) or from the error object
 * of an `error` event inside a stream (`{ type: "overloaded_error", ... }`).
 */
function anthropicErrorType(body: unknown): string | null {
  if (typeof body !== "object" || body === null) return null;
  const record = body as { type?: unknown; error?: { type?: unknown } };
  const type = record.type === "error" ? record.error?.type : record.type;
  return typeof type === "string" ? type : null;
}

/**
 * How long until an exhausted Anthropic rate limit resets, from the `anthropic-ratelimit-<resource>-remaining`
 * and `-reset` (RFC 3339) headers: the latest reset among the resources with nothing remaining.
 */
function rateLimitResetMs(
  headers: Readonly<Record<string, string | undefined>> | undefined,
  now: number,
): number | null {
  let wait: number | null = null;
  for (const resource of rateLimitedResources) {
    if (headerValue(headers, `anthropic-ratelimit-${resource}-remaining`)?.trim() !== "0") continue;
    const reset = Date.parse(headerValue(headers, `anthropic-ratelimit-${resource}-reset`) ?? "");
    if (Number.isNaN(reset)) continue;
    wait = Math.max(wait ?? 0, reset - now, 0);
  }
  return wait;
}

/**
 * Anthropic's error types decide the class where the status alone would not (529 `overloaded_error`, an
 * `error` event inside a 200 stream, 402 `billing_error`); a rate limit waits for `retry-after`, else for
 * the reset time of the exhausted `anthropic-ratelimit-*` limit.
 */
export function readAnthropicFailure(facts: ProviderFailureFacts): ProviderFailureVerdict | null {
  const type = anthropicErrorType(facts.body);
  const errorClass = type === null ? undefined : classByErrorType[type];
  if (errorClass === undefined) {
    if (facts.statusCode !== 429) return null;
    return {
      errorClass: "rate_limit",
      reason: "was rate limited",
      retryAfterMs: parseRetryAfterMs(facts.headers, facts.now) ?? rateLimitResetMs(facts.headers, facts.now),
    };
  }
  const verdict = { errorClass, reason: `failed: ${type}` };
  if (errorClass !== "rate_limit") return verdict;
  return {
    ...verdict,
    retryAfterMs: parseRetryAfterMs(facts.headers, facts.now) ?? rateLimitResetMs(facts.headers, facts.now),
  };
}
