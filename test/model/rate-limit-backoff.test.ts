import { describe, expect, it } from "vitest";
import {
  maximumBackoffMs,
  maximumRetryAfterMs,
  rateLimitDelayMs,
} from "../../src/model/rate-limit-backoff.js";

describe("rateLimitDelayMs", () => {
  it("backs off exponentially from one second, capped at 60 s, without Retry-After", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 1000].map((count) => rateLimitDelayMs(count, null))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000,
    ]);
    expect(maximumBackoffMs).toBe(60_000);
  });

  it("honours Retry-After when the provider sent it, whatever the count", () => {
    expect(rateLimitDelayMs(1, 12_000)).toBe(12_000);
    expect(rateLimitDelayMs(5, 250)).toBe(250);
    expect(rateLimitDelayMs(3, 0)).toBe(0);
  });

  it("honours a Retry-After beyond the backoff cap but caps it at ten minutes", () => {
    expect(rateLimitDelayMs(1, 120_000)).toBe(120_000);
    expect(rateLimitDelayMs(1, 3_600_000)).toBe(maximumRetryAfterMs);
    expect(maximumRetryAfterMs).toBe(600_000);
  });
});
