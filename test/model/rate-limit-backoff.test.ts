import { describe, expect, it } from "vitest";
import {
  maximumBackoffMs,
  maximumRetryAfterMs,
  rateLimitDelayMs,
  waitBeforeAttemptMs,
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

describe("waitBeforeAttemptMs", () => {
  const now = 1_000_000;

  it("does not wait when no target is limited", () => {
    expect(waitBeforeAttemptMs({ limitedUntil: new Map(), targetCount: 2, targetIndex: 0, now })).toBe(0);
  });

  it("does not wait while some target is free, even if the chosen one is limited", () => {
    const limitedUntil = new Map([[0, now + 5_000]]);
    expect(waitBeforeAttemptMs({ limitedUntil, targetCount: 2, targetIndex: 0, now })).toBe(0);
  });

  it("treats an expired limit as free", () => {
    const limitedUntil = new Map([
      [0, now + 5_000],
      [1, now],
    ]);
    expect(waitBeforeAttemptMs({ limitedUntil, targetCount: 2, targetIndex: 0, now })).toBe(0);
  });

  it("waits until the chosen target's limit expires when every target is limited", () => {
    const limitedUntil = new Map([
      [0, now + 5_000],
      [1, now + 2_000],
    ]);
    expect(waitBeforeAttemptMs({ limitedUntil, targetCount: 2, targetIndex: 0, now })).toBe(5_000);
    expect(waitBeforeAttemptMs({ limitedUntil, targetCount: 2, targetIndex: 1, now })).toBe(2_000);
  });

  it("only considers the configured targets", () => {
    const limitedUntil = new Map([[0, now + 3_000]]);
    expect(waitBeforeAttemptMs({ limitedUntil, targetCount: 1, targetIndex: 0, now })).toBe(3_000);
  });
});
