import type { DecisionSource } from "../contract/contract-factory-input.js";
import type { Ability } from "./ability.js";

/** The abilities one agent names, resolved to their files, and the budget they are fitted to. */
export interface AgentAbilities {
  /** Always injected, first, in this order. */
  readonly core: readonly Ability[];
  /** Injected when they match the task, by relevance (highest first), then id; never a core ability. */
  readonly candidates: readonly Ability[];
  readonly tokenBudget: number;
  readonly tokenBudgetSource: DecisionSource;
}
