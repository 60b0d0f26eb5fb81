import { CharterError } from "../foundation/charter-error.js";

export interface PlaceholderSources {
  /** The file being expanded, named in errors. */
  readonly file: string;
  /** Variables from the `.charter.env` beside that file; they win over the process environment. */
  readonly fileVariables: ReadonlyMap<string, string>;
  readonly processEnvironment: Readonly<Record<string, string | undefined>>;
  /**
   * Told every value a placeholder resolved to and where it came from: each is registered as a secret, since a
   * `${VAR}` in configuration is how credentials get there, whichever source supplied it.
   */
  readonly onResolved?: (variable: string, value: string, from: "env-file" | "environment") => void;
}

// Only `${NAME}` with an environment-variable name is a placeholder: `${parameters.x}` (filled per call by
// REST tools) and any other `${...}` text stay exactly as written.
const placeholderPattern = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Returns a copy of a parsed JSON value with every `${VAR}` in its string values replaced, looking in the
 * file's `.charter.env` first, then the process environment. Keys are never expanded. An unresolved
 * variable is an error naming the variable and the file.
 */
export function expandPlaceholders(value: unknown, sources: PlaceholderSources): unknown {
  if (typeof value === "string") return expandString(value, sources);
  if (Array.isArray(value)) return value.map((item) => expandPlaceholders(item, sources));
  if (value !== null && typeof value === "object") {
    const expanded: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      Object.defineProperty(expanded, key, {
        value: expandPlaceholders(member, sources),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return expanded;
  }
  return value;
}

function expandString(text: string, sources: PlaceholderSources): string {
  if (!text.includes("${")) return text;
  return text.replace(placeholderPattern, (_placeholder, variable: string) => {
    const fromFile = sources.fileVariables.get(variable);
    const resolved = fromFile ?? sources.processEnvironment[variable];
    if (resolved !== undefined)
      sources.onResolved?.(variable, resolved, fromFile !== undefined ? "env-file" : "environment");
    if (resolved === undefined) {
      throw new CharterError(
        "ENVIRONMENT_VARIABLE_UNRESOLVED",
        `${sources.file}: \${${variable}} is not set in the .charter.env beside it nor in the environment`,
        { details: { variable, file: sources.file } },
      );
    }
    return resolved;
  });
}
