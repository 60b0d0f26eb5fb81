import type { Ability } from "./ability.js";
import { abilityRelevance, matchWords } from "./ability-relevance.js";
import type { AgentAbilities } from "./agent-abilities.js";

/** One ability chosen for a task, in injection order. */
export interface SelectedAbility {
  readonly ability: Ability;
  readonly kind: "core" | "matched";
  /** The keyword relevance that chose a matched ability; null for a core one. */
  readonly relevance: number | null;
}

/**
 * The abilities to inject for a task, in priority order: every core ability (whatever the task), in the agent's
 * order, then each candidate that matches the task (relevance above zero), most relevant first and, on equal
 * relevance, by id. Pure and deterministic; the token budget is applied afterwards (fitAbilities).
 */
export function selectAbilities(abilities: AgentAbilities, task: string): readonly SelectedAbility[] {
  const selected: SelectedAbility[] = abilities.core.map((ability) => ({
    ability,
    kind: "core",
    relevance: null,
  }));
  if (abilities.candidates.length === 0) return selected;
  const taskWords = matchWords(task);
  const matched = abilities.candidates
    .map((ability) => ({
      ability,
      kind: "matched" as const,
      relevance: abilityRelevance(ability, taskWords),
    }))
    .filter((entry) => entry.relevance > 0)
    .sort(
      (left, right) =>
        right.relevance - left.relevance ||
        (left.ability.id < right.ability.id ? -1 : left.ability.id > right.ability.id ? 1 : 0),
    );
  return [...selected, ...matched];
}
