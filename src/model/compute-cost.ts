import type { ModelUsage } from "./model-client.js";

/** A model's price in USD per million tokens (configuration `pricing.<provider>.<model>`). */
export interface ModelPricing {
  /** Input tokens that were neither read from nor written to a prompt cache. */
  readonly input: number;
  /** Output tokens, reasoning included. */
  readonly output: number;
  /** Input tokens read from the prompt cache; `input` applies when absent. */
  readonly cacheRead?: number;
  /** Input tokens written to the prompt cache; `input` applies when absent. */
  readonly cacheWrite?: number;
}

const tokensPerPricingUnit = 1_000_000;

/**
 * The cost of one model call in USD, or null when the model has no price (unknown is not zero). Input
 * tokens count cached reads and writes, which are priced apart when the pricing says how; reasoning is
 * part of the output tokens.
 */
export function computeCostUsd(pricing: ModelPricing | undefined, usage: ModelUsage): number | null {
  if (pricing === undefined) return null;
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const uncachedInput = Math.max(0, usage.inputTokens - cacheRead - cacheWrite);
  const microDollars =
    uncachedInput * pricing.input +
    cacheRead * (pricing.cacheRead ?? pricing.input) +
    cacheWrite * (pricing.cacheWrite ?? pricing.input) +
    usage.outputTokens * pricing.output;
  return microDollars / tokensPerPricingUnit;
}
