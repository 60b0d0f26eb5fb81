import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { targetIndexForAttempt } from "../../src/model/target-rotation.js";

describe("targetIndexForAttempt", () => {
  it("cycles through the targets round-robin, attempt N using (N - 1) % count", () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => targetIndexForAttempt(3, attempt))).toEqual([
      0, 1, 2, 0, 1, 2, 0,
    ]);
  });

  it("always uses the only target when there is one", () => {
    expect([1, 2, 3].map((attempt) => targetIndexForAttempt(1, attempt))).toEqual([0, 0, 0]);
  });

  it.each([
    [0, 1],
    [2, 0],
    [2, 1.5],
    [-1, 1],
  ])("rejects targetCount %d with attempt %d", (targetCount, attempt) => {
    let caught: unknown;
    try {
      targetIndexForAttempt(targetCount, attempt);
    } catch (error) {
      caught = error;
    }
    expect(CharterError.isInstance(caught)).toBe(true);
    expect((caught as CharterError).code).toBe("INTERNAL_ERROR");
    expect((caught as CharterError).details).toEqual({ targetCount, attempt });
  });
});
