const durationPattern = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)$/;
const unitMilliseconds: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration as the agent frontmatter and configuration write it: a number of milliseconds, or a string
 * such as "500ms", "5s", "1.5s", "2m", "1h". Returns whole positive milliseconds, or undefined when the
 * value is not a duration (the caller names the key).
 */
export function parseDuration(value: number | string): number | undefined {
  let milliseconds: number;
  if (typeof value === "number") {
    milliseconds = value;
  } else {
    const match = durationPattern.exec(value.trim());
    if (match === null) return undefined;
    milliseconds = Number(match[1]) * (unitMilliseconds[match[2] ?? ""] ?? Number.NaN);
  }
  return Number.isSafeInteger(milliseconds) && milliseconds > 0 ? milliseconds : undefined;
}
