/**
 * Which of a server's tools are exposed, from `toolsAllowed` and `toolsDenied` patterns.
 *
 * A pattern is an exact name or a glob: `*` matches any run of characters (none included), `?` exactly one
 * character, and every other character only itself. Matching is case-sensitive and covers the whole name.
 * A pattern may name the server's own tool (`read_*`) or the name the model sees (`files__read_*`).
 */
export interface ToolNameFilterPatterns {
  /** Only tools matching one of these are exposed; absent or `null` exposes every tool. */
  readonly toolsAllowed?: readonly string[] | null;
  /** Tools matching one of these are never exposed, even when allowed. */
  readonly toolsDenied?: readonly string[] | null;
}

/** True when a tool, known by any of the given names, is exposed. */
export type ToolNameFilter = (...names: readonly string[]) => boolean;

const specialCharacters = /[.+^${}()|[\]\\]/g;

function patternToExpression(pattern: string): RegExp {
  let source = "";
  for (const character of pattern) {
    if (character === "*") source += ".*";
    else if (character === "?") source += ".";
    else source += character.replace(specialCharacters, "\\$&");
  }
  // `s`: a tool name containing a newline is still matched by `*`.
  return new RegExp(`^${source}$`, "su");
}

function matcherOf(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set(patterns.filter((pattern) => !pattern.includes("*") && !pattern.includes("?")));
  const globs = patterns.filter((pattern) => !exact.has(pattern)).map(patternToExpression);
  return (name) => exact.has(name) || globs.some((glob) => glob.test(name));
}

/** Compiles the patterns once; the filter is then called per listed tool. */
export function createToolNameFilter(patterns: ToolNameFilterPatterns): ToolNameFilter {
  const allowed = patterns.toolsAllowed == null ? null : matcherOf(patterns.toolsAllowed);
  const denied = patterns.toolsDenied == null ? null : matcherOf(patterns.toolsDenied);
  return (...names) => (allowed === null || names.some(allowed)) && (denied === null || !names.some(denied));
}
