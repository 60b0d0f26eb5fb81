import type { Ability } from "./ability.js";

/**
 * The words of a text as keywords are matched against them: Unicode-normalised (NFKC), lowercased, cut at every
 * character that is not a letter, a mark or a digit. "Write SQL-queries!" is `write`, `sql`, `queries`.
 */
export function matchWords(text: string): string[] {
  return (
    text
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{M}\p{N}]+/gu) ?? []
  );
}

/**
 * How relevant an ability is to a task: the number of its distinct keywords found in the task, a keyword being
 * found when its words appear in the task consecutively, as whole words (`pull request` in "review this pull
 * request", not in "pull the request"; `sql` in "SQL-heavy", not in "mysql"). Whole numbers only, no weights
 * and nothing random: the same task and ability always give the same relevance. Zero means it does not match.
 */
export function abilityRelevance(ability: Pick<Ability, "keywords">, taskWords: readonly string[]): number {
  const seen = new Set<string>();
  let relevance = 0;
  for (const keyword of ability.keywords) {
    const words = matchWords(keyword);
    const key = words.join(" ");
    if (words.length === 0 || seen.has(key)) continue;
    seen.add(key);
    if (containsSequence(taskWords, words)) relevance++;
  }
  return relevance;
}

function containsSequence(haystack: readonly string[], needle: readonly string[]): boolean {
  for (let start = 0; start + needle.length <= haystack.length; start++) {
    let index = 0;
    while (index < needle.length && haystack[start + index] === needle[index]) index++;
    if (index === needle.length) return true;
  }
  return false;
}
