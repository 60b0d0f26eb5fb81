import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { RunStore } from "../../store/run-store.js";

/** The length of every rate-limit window. */
export const rateWindowMilliseconds = 60_000;

/** A request counted against a limit: over it or not, and when the window ends. */
export interface RateCount {
  readonly count: number;
  readonly limit: number;
  readonly exceeded: boolean;
  /** Whole seconds until the window ends (at least 1): what `Retry-After` says. */
  readonly retryAfterSeconds: number;
}

/**
 * Counts a request of `subject` in the current fixed 60-second window of the store (the tenant's view for a
 * tenant's subject, the root view for an address), and says whether it is over `limit`. Fixed windows, counted in
 * the store, are what every process on one PostgreSQL store can agree on with one atomic upsert.
 */
export async function countRequest(
  store: RunStore,
  environment: RuntimeEnvironment,
  subject: string,
  limit: number,
): Promise<RateCount> {
  const now = environment.now();
  const windowStart = Math.floor(now / rateWindowMilliseconds) * rateWindowMilliseconds;
  const count = await store.countInRateWindow({
    subject,
    windowStart,
    expiredBefore: windowStart,
  });
  return {
    count,
    limit,
    exceeded: count > limit,
    retryAfterSeconds: Math.max(1, Math.ceil((windowStart + rateWindowMilliseconds - now) / 1000)),
  };
}
