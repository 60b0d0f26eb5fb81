import type { ProviderFailureFacts, ProviderFailureVerdict } from "../provider-failure.js";

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function identifier(value: unknown): string | null {
  return typeof value === "string" || typeof value === "number" ? String(value) : null;
}

/**
 * The `code` and `type` of an OpenAI error wherever its formats put them: an HTTP error body
 * (`error.code`), a Responses stream `error` event (`code` at the top), or `response.failed`
 * (`response.error.code`).
 */
function openAIErrorIdentifiers(body: unknown): readonly string[] {
  const frame = asRecord(body);
  if (frame === null) return [];
  const nested = asRecord(frame.error) ?? asRecord(asRecord(frame.response)?.error) ?? frame;
  return [identifier(nested.code), identifier(nested.type)].filter((value) => value !== null);
}

/**
 * OpenAI's own error identifiers, which decide where the status alone would mislead: `insufficient_quota`
 * arrives as HTTP 429 (or inside a stream) but is a spent budget, not a rate limit.
 */
export function readOpenAIFailure(facts: ProviderFailureFacts): ProviderFailureVerdict | null {
  const identifiers = openAIErrorIdentifiers(facts.body);
  if (identifiers.includes("insufficient_quota")) {
    return { errorClass: "quota", reason: "was refused: insufficient_quota" };
  }
  if (facts.statusCode !== null) return null;
  // Inside a stream there is no status: the identifiers are all there is.
  if (identifiers.includes("rate_limit_exceeded")) {
    return { errorClass: "rate_limit", reason: "was rate limited: rate_limit_exceeded" };
  }
  if (identifiers.includes("server_error")) return { errorClass: "server", reason: "failed: server_error" };
  return null;
}
