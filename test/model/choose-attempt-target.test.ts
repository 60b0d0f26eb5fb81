import { describe, expect, it } from "vitest";
import { chooseAttemptTarget } from "../../src/model/choose-attempt-target.js";

const now = 1_000_000;

describe("chooseAttemptTarget", () => {
  it("is plain round-robin, targets[(N-1) % n], when no target is limited", () => {
    const chosen = [1, 2, 3, 4].map(
      (attempt) => chooseAttemptTarget({ targetCount: 3, attempt, limitedUntil: new Map(), now }).targetIndex,
    );
    expect(chosen).toEqual([0, 1, 2, 0]);
  });

  it("skips a target inside its rate-limit window while another is free, without waiting", () => {
    const limitedUntil = new Map([[0, now + 30_000]]);
    expect(chooseAttemptTarget({ targetCount: 2, attempt: 3, limitedUntil, now })).toEqual({
      targetIndex: 1,
      waitMilliseconds: 0,
    });
  });

  it("takes the next free target in rotation order from the starting point", () => {
    const limitedUntil = new Map([
      [1, now + 5_000],
      [2, now + 5_000],
    ]);
    expect(chooseAttemptTarget({ targetCount: 4, attempt: 2, limitedUntil, now }).targetIndex).toBe(3);
  });

  it("treats an expired window as free", () => {
    const limitedUntil = new Map([[0, now]]);
    expect(chooseAttemptTarget({ targetCount: 2, attempt: 1, limitedUntil, now })).toEqual({
      targetIndex: 0,
      waitMilliseconds: 0,
    });
  });

  it("waits only when every target is limited, for the window that ends first", () => {
    const limitedUntil = new Map([
      [0, now + 5_000],
      [1, now + 2_000],
    ]);
    expect(chooseAttemptTarget({ targetCount: 2, attempt: 3, limitedUntil, now })).toEqual({
      targetIndex: 1,
      waitMilliseconds: 2_000,
    });
  });

  it("on equal windows, waits for the first one in rotation order", () => {
    const limitedUntil = new Map([
      [0, now + 4_000],
      [1, now + 4_000],
    ]);
    expect(chooseAttemptTarget({ targetCount: 2, attempt: 2, limitedUntil, now })).toEqual({
      targetIndex: 1,
      waitMilliseconds: 4_000,
    });
  });

  it("a single limited target is waited for", () => {
    const limitedUntil = new Map([[0, now + 3_000]]);
    expect(chooseAttemptTarget({ targetCount: 1, attempt: 2, limitedUntil, now })).toEqual({
      targetIndex: 0,
      waitMilliseconds: 3_000,
    });
  });
});
