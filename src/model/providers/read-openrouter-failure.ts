import type { ProviderFailureFacts, ProviderFailureVerdict } from "../provider-failure.js";

interface OpenRouterError {
  readonly code?: unknown;
  readonly metadata?: { readonly reasons?: unknown; readonly flagged_input?: unknown } | null;
}

function openRouterError(body: unknown): OpenRouterError | null {
  if (typeof body !== "object" || body === null) return null;
  const error = (body as { error?: unknown }).error ?? body;
  return typeof error === "object" && error !== null ? (error as OpenRouterError) : null;
}

/**
 * OpenRouter's error format (`{ error: { code, message, metadata } }`, `code` being an HTTP status). Its
 * 403 is usually a moderation refusal of the input (`metadata.reasons` / `flagged_input`), which is a bad
 * request, not an authentication failure; an error inside a 200 stream or a 200 body carries only `code`,
 * which is then read as the status.
 */
export function readOpenRouterFailure(facts: ProviderFailureFacts): ProviderFailureVerdict | null {
  const error = openRouterError(facts.body);
  if (error === null) return null;
  const code = typeof error.code === "number" ? error.code : Number.NaN;
  const status = facts.statusCode !== null && facts.statusCode >= 400 ? facts.statusCode : code;
  if (
    status === 403 &&
    (error.metadata?.reasons !== undefined || error.metadata?.flagged_input !== undefined)
  ) {
    return { errorClass: "bad_request", reason: "was refused by moderation" };
  }
  if (facts.statusCode !== null && facts.statusCode >= 400) return null;
  // No HTTP status to go by (inside a stream, or a 200 body): the error's own code says it.
  if (status === 401 || status === 403) return { errorClass: "auth", reason: `was refused: code ${status}` };
  if (status === 402) return { errorClass: "quota", reason: "was refused: code 402 (credits)" };
  if (status === 408) return { errorClass: "timeout", reason: "timed out: code 408" };
  if (status === 429) return { errorClass: "rate_limit", reason: "was rate limited: code 429" };
  if (status >= 500) return { errorClass: "server", reason: `failed: code ${status}` };
  if (status >= 400) return { errorClass: "bad_request", reason: `was rejected: code ${status}` };
  return null;
}
