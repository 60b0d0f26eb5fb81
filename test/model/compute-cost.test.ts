import { describe, expect, it } from "vitest";
import { computeCostUsd } from "../../src/model/compute-cost.js";

describe("computeCostUsd", () => {
  it("prices input and output per million tokens", () => {
    expect(
      computeCostUsd({ input: 0.15, output: 0.6 }, { inputTokens: 1_000_000, outputTokens: 500_000 }),
    ).toBeCloseTo(0.45, 12);
    expect(computeCostUsd({ input: 3, output: 15 }, { inputTokens: 1200, outputTokens: 300 })).toBeCloseTo(
      0.0081,
      12,
    );
  });

  it("prices cached reads and writes apart from the rest of the input", () => {
    const pricing = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
    // 100 input tokens of which 60 read from the cache and 10 written to it: 30 at the input price.
    const usage = { inputTokens: 100, outputTokens: 30, cacheReadTokens: 60, cacheWriteTokens: 10 };
    expect(computeCostUsd(pricing, usage)).toBeCloseTo(
      (30 * 3 + 60 * 0.3 + 10 * 3.75 + 30 * 15) / 1_000_000,
      15,
    );
  });

  it("prices cached tokens as input when the pricing has no cache prices", () => {
    const usage = { inputTokens: 100, outputTokens: 0, cacheReadTokens: 60, cacheWriteTokens: 10 };
    expect(computeCostUsd({ input: 2, output: 8 }, usage)).toBeCloseTo((100 * 2) / 1_000_000, 15);
  });

  it("counts reasoning as output (it is already within the output tokens)", () => {
    const usage = { inputTokens: 0, outputTokens: 1000, reasoningTokens: 800 };
    expect(computeCostUsd({ input: 1, output: 4 }, usage)).toBeCloseTo(0.004, 15);
  });

  it("is null without a price: an unknown cost is not zero", () => {
    expect(computeCostUsd(undefined, { inputTokens: 10, outputTokens: 10 })).toBeNull();
    expect(computeCostUsd({ input: 0, output: 0 }, { inputTokens: 10, outputTokens: 10 })).toBe(0);
  });
});
