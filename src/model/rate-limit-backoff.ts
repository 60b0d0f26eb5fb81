/** The longest Retry-After Charter honours; a provider asking for more is waited on for this long. */
export const maximumRetryAfterMs = 10 * 60_000;
/** Exponential backoff starts at one second and doubles up to this cap. */
export const maximumBackoffMs = 60_000;
const initialBackoffMs = 1_000;

/**
 * How long to wait after a rate limit (seed 000 §5, "honor Retry-After, exponential backoff"): the
 * provider's Retry-After when it sent one (capped at ten minutes), otherwise 1 s, 2 s, 4 s ... for the
 * 1st, 2nd, 3rd consecutive rate limit, capped at 60 s.
 */
export function rateLimitDelayMs(consecutiveRateLimits: number, retryAfterMs: number | null): number {
  if (retryAfterMs !== null && Number.isFinite(retryAfterMs)) {
    return Math.min(Math.max(0, Math.ceil(retryAfterMs)), maximumRetryAfterMs);
  }
  const exponent = Math.max(0, Math.floor(consecutiveRateLimits) - 1);
  // 2^6 s already exceeds the cap; stopping there keeps huge counts from overflowing to Infinity.
  return Math.min(initialBackoffMs * 2 ** Math.min(exponent, 6), maximumBackoffMs);
}
