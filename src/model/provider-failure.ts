import type { ModelErrorClass } from "./model-call-error.js";

/** What a failed call left to read: the HTTP status (null for an error inside a stream), body and headers. */
export interface ProviderFailureFacts {
  readonly statusCode: number | null;
  /** The error body, parsed when it was JSON text; for an error inside a stream, the error object itself. */
  readonly body: unknown;
  /** Response headers; names as the transport delivered them (compare case-insensitively). */
  readonly headers: Readonly<Record<string, string | undefined>> | undefined;
  /** Epoch milliseconds, for reset times given as dates. */
  readonly now: number;
}

export interface ProviderFailureVerdict {
  readonly errorClass: ModelErrorClass;
  /** Completes "model call to <target> ...", for example "was rate limited (rate_limit_error)". */
  readonly reason: string;
  /** How long the provider asked us to wait, when its body or headers say so. */
  readonly retryAfterMs?: number | null;
}

/**
 * A provider's reading of its own error format (Anthropic's `error.type`, Gemini's `error.status` and
 * details, OpenRouter's `error.code`...), from structured fields only, never from message text. Null when
 * the facts say nothing the generic status rules would not.
 */
export type ProviderFailureReader = (facts: ProviderFailureFacts) => ProviderFailureVerdict | null;

/** A header's value, its name matched case-insensitively. */
export function headerValue(
  headers: Readonly<Record<string, string | undefined>> | undefined,
  name: string,
): string | undefined {
  if (headers === undefined) return undefined;
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) return headers[key];
  return undefined;
}
