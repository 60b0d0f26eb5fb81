import type {
  ContractAbilityInjection,
  DecisionSource,
  InjectedAbility,
} from "../contract/contract-factory-input.js";
import { type TokenPrefixes, tokenPrefixes } from "../model/token-prefixes.js";
import type { SelectedAbility } from "./select-abilities.js";

/** How one ability appears in the system prompt: delimited and named, so the model (and a reader) can tell. */
export function abilitySection(id: string, knowledge: string): string {
  return `<ability id="${id}">\n${knowledge}\n</ability>`;
}

/** Sections are separated by a blank line; so is the last one from the agent's own prompt. */
export const abilitySeparator = "\n\n";

export interface FitAbilitiesOptions {
  readonly tokenBudget: number;
  readonly tokenBudgetSource: DecisionSource;
  /** The context guard's token count (model/token-estimator.ts `countText`). */
  readonly countText: (text: string) => number;
  /** Cuts text at token boundaries; the o200k_base encoding's by default. */
  readonly tokenPrefixes?: (text: string, maxTokens: number) => TokenPrefixes;
}

/**
 * Fits the selected abilities into the token budget, in their priority order (core first, then matched): each
 * one that fits whole is injected whole; the first that does not is cut at a token boundary to the longest
 * prefix of its knowledge that still fits (or left out when not even one token does), and every one after it is
 * left out. The budget holds for the whole injected text, delimiters included, counted with the context guard's
 * tokenizer on exactly the text injected: it is never exceeded. Nothing is counted when nothing is selected.
 */
export function fitAbilities(
  selected: readonly SelectedAbility[],
  options: FitAbilitiesOptions,
): ContractAbilityInjection {
  const { tokenBudget: budget, countText } = options;
  const cutAtTokens = options.tokenPrefixes ?? tokenPrefixes;
  const sections: string[] = [];
  const injected: InjectedAbility[] = [];
  const leftOut: Omit<InjectedAbility, "tokens" | "truncated">[] = [];
  const notes: string[] = [];
  let text = "";
  let tokens = 0;
  let full = false;
  const withSection = (section: string) => [...sections, section].join(abilitySeparator);

  for (const { ability, kind, relevance } of selected) {
    const recorded = { id: ability.id, kind, contentHash: ability.contentHash, relevance };
    if (full) {
      leftOut.push(recorded);
      notes.push(`${ability.id} left out`);
      continue;
    }
    const whole = abilitySection(ability.id, ability.content);
    const candidate = withSection(whole);
    const candidateTokens = countText(candidate);
    if (candidateTokens <= budget) {
      sections.push(whole);
      injected.push({ ...recorded, tokens: countText(whole), truncated: false });
      text = candidate;
      tokens = candidateTokens;
      continue;
    }
    // The budget is reached here: this ability is cut to what still fits, and the ones after it are left out.
    full = true;
    const prefixes = cutAtTokens(ability.content, budget);
    const fitting = (count: number): { text: string; tokens: number; section: string } | null => {
      const knowledge = prefixes.prefix(count).trimEnd();
      if (knowledge === "") return null;
      const section = abilitySection(ability.id, knowledge);
      const joined = withSection(section);
      const joinedTokens = countText(joined);
      return joinedTokens <= budget ? { text: joined, tokens: joinedTokens, section } : null;
    };
    // The longest prefix that fits: binary search over the token count; every answer kept was counted and fits.
    let low = 0;
    let high = prefixes.count;
    let best: ReturnType<typeof fitting> = null;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      const fitted = fitting(middle);
      if (fitted === null) high = middle - 1;
      else {
        low = middle;
        best = fitted;
      }
    }
    if (best === null) {
      leftOut.push(recorded);
      notes.push(`${ability.id} left out`);
      continue;
    }
    sections.push(best.section);
    injected.push({ ...recorded, tokens: countText(best.section), truncated: true });
    text = best.text;
    tokens = best.tokens;
    notes.push(`${ability.id} cut to ${low} of ${countText(ability.content)} tokens`);
  }
  return {
    text,
    tokens,
    tokenBudget: budget,
    tokenBudgetSource: options.tokenBudgetSource,
    injected,
    leftOut,
    cut: notes.length === 0 ? null : `token budget ${budget}: ${notes.join("; ")}`,
  };
}
