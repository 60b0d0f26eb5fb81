import { isMap, isScalar, LineCounter, parseDocument } from "yaml";
import { describeSchemaIssues, type SchemaIssue, schemaIssues } from "../config/schema-issues.js";
import { CharterError } from "../foundation/charter-error.js";
import { blake3Hex } from "../foundation/content-hash.js";
import { deepFreeze } from "../foundation/deep-freeze.js";
import type { Ability } from "./ability.js";
import { abilityFrontmatterSchema } from "./ability-file-schema.js";

const delimiter = "---";
// The frontmatter starts on the file's second line, after the opening "---".
const frontmatterFirstLine = 2;

/**
 * Parses an ability file: a YAML frontmatter (`id`, `keywords`, `description`) between two `---` lines, then the
 * knowledge. Every problem is an `ABILITY_INVALID` naming the file and the key (and the line when known).
 */
export function parseAbilityFile(text: string, file: string): Ability {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trimEnd() !== delimiter) {
    throw invalid(
      file,
      "id",
      'the file must start with a frontmatter ("---" lines) naming the ability\'s id and keywords',
      1,
    );
  }
  const closing = lines.findIndex((line, index) => index > 0 && line.trimEnd() === delimiter);
  if (closing === -1)
    throw invalid(file, "id", 'the frontmatter opened on line 1 is never closed with "---"', 1);

  const lineCounter = new LineCounter();
  const document = parseDocument(lines.slice(1, closing).join("\n"), {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: true,
  });
  const [syntaxError] = document.errors;
  if (syntaxError !== undefined) {
    const position = lineCounter.linePos(syntaxError.pos[0]);
    throw invalid(
      file,
      "frontmatter",
      `invalid YAML: ${syntaxError.message}`,
      position.line + frontmatterFirstLine - 1,
    );
  }
  const data: unknown = document.toJS({ maxAliasCount: 100 }) ?? {};
  if (typeof data !== "object" || data === null || Array.isArray(data))
    throw invalid(file, "frontmatter", "the frontmatter must be a mapping of keys", frontmatterFirstLine);

  const parsed = abilityFrontmatterSchema.safeParse(data);
  if (!parsed.success) {
    const issues = schemaIssues(parsed.error, [], abilityFrontmatterSchema);
    const first = issues[0] as SchemaIssue;
    const topKey = first.path[0];
    let line: number | undefined;
    if (isMap(document.contents) && typeof topKey === "string") {
      const pair = document.contents.items.find((item) => isScalar(item.key) && item.key.value === topKey);
      const offset = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
      if (offset !== undefined) line = lineCounter.linePos(offset).line + frontmatterFirstLine - 1;
    }
    throw invalid(file, first.key, describeSchemaIssues(issues), line, {
      issues,
      ...(first.suggestion === undefined ? {} : { suggestion: first.suggestion }),
    });
  }

  const content = lines
    .slice(closing + 1)
    .join("\n")
    .trim();
  if (content === "")
    throw invalid(file, "body", "the ability has no knowledge: write it after the frontmatter", closing + 2);
  return deepFreeze({
    id: parsed.data.id,
    keywords: parsed.data.keywords,
    description: parsed.data.description ?? null,
    content,
    contentHash: blake3Hex(content),
    file,
  });
}

function invalid(
  file: string,
  key: string,
  problem: string,
  line: number | undefined,
  extra: Record<string, unknown> = {},
): CharterError {
  const where = line === undefined ? "" : ` (line ${line})`;
  return new CharterError("ABILITY_INVALID", `Ability file ${file}${where}: ${problem}`, {
    details: { file, key, ...(line === undefined ? {} : { line }), ...extra },
  });
}
