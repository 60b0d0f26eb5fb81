import { readFile } from "node:fs/promises";
import { CharterError } from "../foundation/charter-error.js";

const assignmentPattern = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;
const doubleQuoteEscapes: Readonly<Record<string, string>> = {
  n: "\n",
  r: "\r",
  t: "\t",
  '"': '"',
  "\\": "\\",
};

/**
 * Parses a `.charter.env` file: `KEY=value` lines, `#` comments, an optional `export ` prefix, values
 * bare, 'single-quoted' (literal) or "double-quoted" (with \n, \t, \" and \\ escapes). A bare value
 * ends at ` #`. Any other line is an error naming the file and the line, never skipped silently.
 */
export function parseEnvFile(text: string, file: string): Map<string, string> {
  const variables = new Map<string, string>();
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  for (let index = 0; index < lines.length; index++) {
    const line = (lines[index] as string).trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = assignmentPattern.exec(line);
    const value = match === null ? undefined : parseValue(match[2] as string);
    if (match === null || value === undefined) {
      throw new CharterError(
        "CONFIGURATION_INVALID",
        `${file}, line ${index + 1}: expected KEY=value (optionally quoted), found ${JSON.stringify(line)}`,
        { details: { file, line: index + 1 } },
      );
    }
    variables.set(match[1] as string, value);
  }
  return variables;
}

/** Reads and parses an env file; a missing file is no variables, not an error. */
export async function loadEnvFile(path: string): Promise<Map<string, string> | null> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new CharterError("CONFIGURATION_INVALID", `Cannot read ${path}`, {
      details: { file: path, reason: (error as NodeJS.ErrnoException).code ?? "unreadable" },
      cause: error,
    });
  }
  return parseEnvFile(text, path);
}

function parseValue(raw: string): string | undefined {
  const quote = raw[0];
  if (quote !== '"' && quote !== "'") {
    const comment = raw.search(/\s#/);
    return (comment === -1 ? raw : raw.slice(0, comment)).trim();
  }
  let value = "";
  for (let index = 1; index < raw.length; index++) {
    const character = raw[index] as string;
    if (character === quote) {
      const rest = raw.slice(index + 1).trim();
      return rest === "" || rest.startsWith("#") ? value : undefined;
    }
    if (quote === '"' && character === "\\" && index + 1 < raw.length) {
      const escaped = raw[index + 1] as string;
      value += doubleQuoteEscapes[escaped] ?? `\\${escaped}`;
      index++;
      continue;
    }
    value += character;
  }
  // The closing quote is missing.
  return undefined;
}
