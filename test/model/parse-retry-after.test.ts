import { describe, expect, it } from "vitest";
import { parseRetryAfterMs } from "../../src/model/parse-retry-after.js";

const now = Date.UTC(2026, 0, 1);

describe("parseRetryAfterMs", () => {
  it("reads delta-seconds, including fractions", () => {
    expect(parseRetryAfterMs({ "retry-after": "3" }, now)).toBe(3_000);
    expect(parseRetryAfterMs({ "Retry-After": " 1.5 " }, now)).toBe(1_500);
  });

  it("reads an HTTP date against now, never negative", () => {
    expect(parseRetryAfterMs({ "retry-after": new Date(now + 45_000).toUTCString() }, now)).toBe(45_000);
    expect(parseRetryAfterMs({ "retry-after": new Date(now - 45_000).toUTCString() }, now)).toBe(0);
  });

  it("prefers retry-after-ms", () => {
    expect(parseRetryAfterMs({ "retry-after": "30", "retry-after-ms": "250" }, now)).toBe(250);
  });

  it("is null without a usable header", () => {
    expect(parseRetryAfterMs(undefined, now)).toBeNull();
    expect(parseRetryAfterMs({}, now)).toBeNull();
    expect(parseRetryAfterMs({ "retry-after": "soon" }, now)).toBeNull();
    expect(parseRetryAfterMs({ "retry-after": "-5" }, now)).toBeNull();
  });
});
