/**
 * The known name closest to a mistyped one, for "did you mean ...?" hints on unknown commands, flags,
 * frontmatter keys and configuration keys; undefined when nothing is close enough to be a plausible typo.
 *
 * Closeness is the optimal string alignment distance (Levenshtein plus swapping two neighbours, the most common
 * typing slip), compared without case so `maxturns` finds `maxTurns`, and with `-` and `_` ignored so `max_turns`
 * finds it too. A name counts as close when at most a quarter of its letters (at least one, at most three) differ,
 * so a short unrelated word is not "corrected" into another.
 */
export function nearestName(input: string, candidates: Iterable<string>): string | undefined {
  const normalizedInput = normalize(input);
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const normalizedCandidate = normalize(candidate);
    const distance = editDistance(normalizedInput, normalizedCandidate);
    const allowed = Math.min(3, Math.max(1, Math.floor(normalizedInput.length / 4)));
    if (distance <= allowed && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function normalize(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, "");
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps cost 1 each. */
function editDistance(left: string, right: string): number {
  const rows = left.length + 1;
  const columns = right.length + 1;
  const table: number[][] = Array.from({ length: rows }, (_, row) =>
    Array.from({ length: columns }, (_, column) => (row === 0 ? column : column === 0 ? row : 0)),
  );
  for (let row = 1; row < rows; row++) {
    for (let column = 1; column < columns; column++) {
      const cost = left[row - 1] === right[column - 1] ? 0 : 1;
      let distance = Math.min(
        table[row - 1]![column]! + 1,
        table[row]![column - 1]! + 1,
        table[row - 1]![column - 1]! + cost,
      );
      if (row > 1 && column > 1 && left[row - 1] === right[column - 2] && left[row - 2] === right[column - 1])
        distance = Math.min(distance, table[row - 2]![column - 2]! + 1);
      table[row]![column] = distance;
    }
  }
  return table[rows - 1]![columns - 1]!;
}
