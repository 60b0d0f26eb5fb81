import type { ModelErrorClass } from "../model-call-error.js";
import type { ProviderFailureFacts, ProviderFailureVerdict } from "../provider-failure.js";

/** Google's canonical error statuses (`error.status`) that decide a class on their own. */
const classByStatus: Readonly<Record<string, ModelErrorClass>> = {
  UNAUTHENTICATED: "auth",
  PERMISSION_DENIED: "auth",
  DEADLINE_EXCEEDED: "timeout",
  UNAVAILABLE: "server",
  INTERNAL: "server",
  UNKNOWN: "server",
  DATA_LOSS: "server",
  INVALID_ARGUMENT: "bad_request",
  FAILED_PRECONDITION: "bad_request",
  NOT_FOUND: "bad_request",
  OUT_OF_RANGE: "bad_request",
};

interface GoogleErrorDetail {
  readonly "@type"?: unknown;
  readonly reason?: unknown;
  readonly retryDelay?: unknown;
  readonly violations?: unknown;
}

function googleError(body: unknown): { status: string | null; details: readonly GoogleErrorDetail[] } | null {
  if (typeof body !== "object" || body === null) return null;
  // An HTTP error body wraps the error (`{ error: {...} }`); inside a stream it comes bare. Streamed
  // errors may also arrive as a one-element array.
  const candidate = Array.isArray(body) ? body[0] : body;
  const error = (candidate as { error?: unknown }).error ?? candidate;
  if (typeof error !== "object" || error === null) return null;
  const { status, details } = error as { status?: unknown; details?: unknown };
  return {
    status: typeof status === "string" ? status : null,
    details: Array.isArray(details) ? (details as GoogleErrorDetail[]) : [],
  };
}

function detailOfType(details: readonly GoogleErrorDetail[], type: string): GoogleErrorDetail | undefined {
  return details.find((detail) => typeof detail["@type"] === "string" && detail["@type"].endsWith(type));
}

/** `RetryInfo.retryDelay`, a protobuf Duration in JSON ("37s", "1.5s"), in milliseconds. */
function retryDelayMs(details: readonly GoogleErrorDetail[]): number | null {
  const delay = detailOfType(details, "google.rpc.RetryInfo")?.retryDelay;
  if (typeof delay !== "string") return null;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(delay.trim());
  return match === null ? null : Math.ceil(Number(match[1]) * 1000);
}

/** A `QuotaFailure` violation of a per-day quota: waiting within a run will not help, so it is quota. */
function exhaustsDailyQuota(details: readonly GoogleErrorDetail[]): boolean {
  const violations = detailOfType(details, "google.rpc.QuotaFailure")?.violations;
  if (!Array.isArray(violations)) return false;
  return violations.some((violation: { quotaId?: unknown; quotaMetric?: unknown }) =>
    [violation.quotaId, violation.quotaMetric].some(
      (identifier) => typeof identifier === "string" && identifier.includes("PerDay"),
    ),
  );
}

/**
 * Gemini's error format (`{ error: { code, status, details } }`): the canonical status decides, with the
 * details read for what they add. `RESOURCE_EXHAUSTED` is a rate limit that waits for
 * `RetryInfo.retryDelay`, except a per-day quota violation, which is quota; an `INVALID_ARGUMENT` whose
 * `ErrorInfo.reason` is `API_KEY_INVALID` is an authentication failure.
 */
export function readGoogleFailure(facts: ProviderFailureFacts): ProviderFailureVerdict | null {
  const error = googleError(facts.body);
  if (error === null || error.status === null) return null;
  const { status, details } = error;
  if (status === "RESOURCE_EXHAUSTED") {
    if (exhaustsDailyQuota(details))
      return { errorClass: "quota", reason: "was refused: daily quota exhausted" };
    return {
      errorClass: "rate_limit",
      reason: "was rate limited: RESOURCE_EXHAUSTED",
      retryAfterMs: retryDelayMs(details),
    };
  }
  if (
    status === "INVALID_ARGUMENT" &&
    detailOfType(details, "google.rpc.ErrorInfo")?.reason === "API_KEY_INVALID"
  ) {
    return { errorClass: "auth", reason: "was refused: API_KEY_INVALID" };
  }
  const errorClass = classByStatus[status];
  return errorClass === undefined ? null : { errorClass, reason: `failed: ${status}` };
}
