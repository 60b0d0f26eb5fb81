/**
 * Text as selection compares it: Unicode-normalised (NFKC), lowercased, every run of characters that are not
 * letters or digits (punctuation, symbols, whitespace) turned into one space, trimmed. "Review  the PR!" and
 * "review the pr" are the same task.
 */
export function normalizeTaskText(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** Whether normalised `text` holds normalised `phrase` as whole words ("review pr" is in "please review pr 7"). */
export function containsPhrase(text: string, phrase: string): boolean {
  return phrase !== "" && ` ${text} `.includes(` ${phrase} `);
}
