import { describe, expect, it } from "vitest";
import type { ExecutionContract } from "../../src/contract/execution-contract.js";
import { exceedsSynthesisRatio } from "../../src/session/context-guard.js";

// Only the context budget is read; the rest of the contract does not matter to this predicate.
const contractWith = (ratio: number | null) =>
  ({
    context_budget: { context_window: 1000, force_synthesis_at_ratio: ratio },
  }) as unknown as ExecutionContract;
const counters = (tokens: number) => ({ currentCtxTokens: tokens, pendingCtxTokens: 0, schemaCtxTokens: 0 });

// seed 002 §5, predicate 4 ("exceeded")
describe("force_synthesis_at_ratio: when the context ratio counts as exceeded", () => {
  it("does not fire exactly at the ratio, only past it", () => {
    expect(exceedsSynthesisRatio(contractWith(0.5), counters(500), 1)).toBe(false);
    expect(exceedsSynthesisRatio(contractWith(0.5), counters(501), 1)).toBe(true);
  });

  it("applies the usage calibration before comparing", () => {
    expect(exceedsSynthesisRatio(contractWith(0.5), counters(400), 1.25)).toBe(false);
    expect(exceedsSynthesisRatio(contractWith(0.5), counters(401), 1.25)).toBe(true);
  });

  it("never fires when the ratio is unset", () => {
    expect(exceedsSynthesisRatio(contractWith(null), counters(1_000_000), 1)).toBe(false);
  });
});
