import type { ExecutionContract } from "../contract/execution-contract.js";
import type { ContextCounters } from "./session-state.js";

/**
 * The context-window guard of seed 000 §2:
 *   projected = currentCtxTokens + pendingCtxTokens + newCtxTokens + schemaCtxTokens
 *   limit     = contextWindow - contextWindowBufferTokens - maxOutputTokens
 * Estimates are multiplied by the calibration learned from the provider's reported usage.
 */
export function contextLimit(contract: ExecutionContract): number {
  const budget = contract.context_budget;
  return budget.context_window - budget.context_window_buffer_tokens - budget.max_output_tokens;
}

export function projectedTokens(
  counters: ContextCounters,
  newCtxTokens: number,
  calibration: number,
): number {
  return Math.ceil(
    (counters.currentCtxTokens + counters.pendingCtxTokens + newCtxTokens + counters.schemaCtxTokens) *
      calibration,
  );
}

export function exceedsContextLimit(
  contract: ExecutionContract,
  counters: ContextCounters,
  newCtxTokens: number,
  calibration: number,
): boolean {
  return projectedTokens(counters, newCtxTokens, calibration) > contextLimit(contract);
}

/** `force_synthesis_at_ratio` (seed 002): the share of the context window in use that forces synthesis. */
export function exceedsSynthesisRatio(
  contract: ExecutionContract,
  counters: ContextCounters,
  calibration: number,
): boolean {
  const ratio = contract.context_budget.force_synthesis_at_ratio;
  if (ratio === null) return false;
  // "Exceeded" (seed 002 §5, predicate 4) read strictly, as the budgets are: exactly at the ratio is still allowed.
  return projectedTokens(counters, 0, calibration) / contract.context_budget.context_window > ratio;
}
