import { computeCostUsd, type ModelPricing } from "../model/compute-cost.js";
import { ModelCallError } from "../model/model-call-error.js";
import type { ModelClient } from "../model/model-client.js";

/**
 * A budget outside the run that its model calls spend (a server tenant's tokens and cost per day or month): asked
 * before each model call of the run and of its sub-agents, told what each call consumed once it answered.
 */
export interface ModelCallBudget {
  /**
   * Null when the call may go ahead; else why not, in words that name the budget: the run then stops before the
   * call with the outcome FAILED_BUDGET_EXHAUSTED and the code TENANT_BUDGET_EXHAUSTED.
   */
  admit(): Promise<string | null>;
  /** What one model call consumed: its input and output tokens, and its cost when the model has a price. */
  record(consumed: { readonly tokens: number; readonly costUsd: number | null }): Promise<void>;
}

/**
 * A model client that asks the budget before each call and tells it what the call consumed. A refusal is the
 * model call error TENANT_BUDGET_EXHAUSTED of the `quota` class, which is fatal: the run is not retried on another
 * target, and its transcript records the refused attempt like any failed one. A failure to record is not the
 * run's: the call's answer is returned all the same.
 */
export function budgetedModelClient(
  client: ModelClient,
  budget: ModelCallBudget,
  pricing: ModelPricing | null,
): ModelClient {
  return {
    provider: client.provider,
    model: client.model,
    async generate(request) {
      const refusal = await budget.admit();
      if (refusal !== null) throw new ModelCallError("quota", refusal, { code: "TENANT_BUDGET_EXHAUSTED" });
      const response = await client.generate(request);
      const usage = response.usage;
      if (usage !== null) {
        await budget
          .record({
            tokens: usage.inputTokens + usage.outputTokens,
            costUsd: pricing === null ? null : computeCostUsd(pricing, usage),
          })
          .catch(() => undefined);
      }
      return response;
    },
  };
}
