import { basename, dirname, extname, resolve } from "node:path";
import { type Document, isMap, isNode, isScalar, isSeq, LineCounter, parseDocument } from "yaml";
import { CharterError } from "../foundation/charter-error.js";
import { deepFreeze } from "../foundation/deep-freeze.js";
import { readFileText } from "../foundation/read-file-text.js";
import { type AgentSettings, agentFrontmatterSchema, type DelegationMode } from "./agent-settings-schema.js";
import { describeSchemaIssues, type SchemaIssue, schemaIssues } from "./schema-issues.js";

/** What a registry knows about an agent beyond its contract settings: how it is found and selected. */
export interface AgentProfile {
  readonly enabled: boolean;
  readonly keywords: readonly string[];
  readonly exampleTasks: readonly string[];
  readonly notForTasks: readonly string[];
  readonly delegation: DelegationMode;
}

/** An agent as its Markdown file defines it: the frontmatter settings and the body as system prompt. */
export interface AgentDefinition {
  /**
   * The frontmatter `id`, else the file name without extension, lowercased, each run of non-alphanumerics turned
   * into `-`.
   */
  readonly id: string;
  /** Absolute path of the agent file (for a built-in agent, `built-in:<id>`). */
  readonly path: string;
  /** The file's directory: configuration layer 3 looks for `.charter.json` here. */
  readonly directory: string;
  readonly systemPrompt: string;
  readonly settings: AgentSettings;
  readonly profile: AgentProfile;
  /** True for an agent Charter defines itself (the `standard` agent), which has no file. */
  readonly builtIn: boolean;
}

const frontmatterDelimiter = "---";

export async function loadAgentFile(path: string): Promise<AgentDefinition> {
  const absolutePath = resolve(path);
  const text = await readFileText(absolutePath, "AGENT_FILE_INVALID", "Cannot read agent file");
  return parseAgentFile(text, absolutePath);
}

/** Parses an agent file's text; `path` names the file in errors and gives the agent its id. */
export function parseAgentFile(text: string, path: string): AgentDefinition {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  let frontmatterText = "";
  let bodyLines = lines;
  if (lines[0]?.trimEnd() === frontmatterDelimiter) {
    const closing = lines.findIndex((line, index) => index > 0 && line.trimEnd() === frontmatterDelimiter);
    if (closing === -1) {
      throw new CharterError(
        "AGENT_FILE_INVALID",
        `Agent file ${path}: the frontmatter opened on line 1 is never closed with "---"`,
        {
          details: { file: path, line: 1, column: 1 },
        },
      );
    }
    frontmatterText = lines.slice(1, closing).join("\n");
    bodyLines = lines.slice(closing + 1);
  }
  const { id, profile, settings } = parseFrontmatter(frontmatterText, path);
  return deepFreeze({
    id: id ?? agentIdFromPath(path),
    path,
    directory: dirname(path),
    systemPrompt: bodyLines.join("\n").trim(),
    settings,
    profile,
    builtIn: false,
  });
}

export function agentIdFromPath(path: string): string {
  const name = basename(path, extname(path))
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return name === "" ? "agent" : name;
}

// The frontmatter starts on the file's second line, after the opening "---".
const frontmatterFirstLine = 2;

function parseFrontmatter(
  text: string,
  file: string,
): { id: string | undefined; profile: AgentProfile; settings: AgentSettings } {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const [syntaxError] = document.errors;
  if (syntaxError !== undefined) {
    const position = lineCounter.linePos(syntaxError.pos[0]);
    const line = position.line + frontmatterFirstLine - 1;
    throw new CharterError(
      "AGENT_FILE_INVALID",
      `Agent file ${file}: invalid YAML frontmatter at line ${line}, column ${position.col}: ${syntaxError.message}`,
      { details: { file, line, column: position.col, yamlCode: syntaxError.code } },
    );
  }
  const data: unknown = document.toJS({ maxAliasCount: 100 }) ?? {};
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new CharterError(
      "AGENT_FILE_INVALID",
      `Agent file ${file}: the frontmatter must be a mapping of keys`,
      {
        details: { file, line: frontmatterFirstLine, column: 1 },
      },
    );
  }
  const parsed = agentFrontmatterSchema.safeParse(data);
  if (parsed.success) {
    const { id, enabled, keywords, exampleTasks, notForTasks, delegation, ...settings } = parsed.data;
    return {
      id,
      profile: {
        enabled: enabled ?? true,
        keywords: keywords ?? [],
        exampleTasks: exampleTasks ?? [],
        notForTasks: notForTasks ?? [],
        delegation: delegation ?? "none",
      },
      settings,
    };
  }

  // Each issue with its line in the whole file, when it can be found (`charter agents validate` lists them all).
  const issues = schemaIssues(parsed.error, [], agentFrontmatterSchema).map((issue) => {
    const issueLine = lineOfPath(document, lineCounter, issue.path);
    return issueLine === undefined ? issue : { ...issue, line: issueLine + frontmatterFirstLine - 1 };
  });
  const first = issues[0] as SchemaIssue;
  const line = lineOfPath(document, lineCounter, first.path);
  const where = line === undefined ? "" : ` (line ${line + frontmatterFirstLine - 1})`;
  const problem = first.unknownKey
    ? `unknown key "${first.key}"${where}${first.suggestion === undefined ? "" : `; did you mean ${first.suggestion}?`}`
    : `invalid value for "${first.key}"${where}: ${first.message}`;
  const others = issues.length > 1 ? `; also ${describeSchemaIssues(issues.slice(1))}` : "";
  throw new CharterError("AGENT_FILE_INVALID", `Agent file ${file}: ${problem}${others}`, {
    details: {
      file,
      key: first.key,
      ...(first.suggestion === undefined ? {} : { suggestion: first.suggestion }),
      ...(line === undefined ? {} : { line: line + frontmatterFirstLine - 1 }),
      issues,
    },
  });
}

/** The line (1-based, within the frontmatter) of the key or item a schema issue points at. */
function lineOfPath(
  document: Document,
  lineCounter: LineCounter,
  path: readonly (string | number)[],
): number | undefined {
  if (path.length === 0) return undefined;
  const parent = path.length === 1 ? document.contents : document.getIn(path.slice(0, -1), true);
  const last = path[path.length - 1];
  let offset: number | undefined;
  if (isMap(parent)) {
    const pair = parent.items.find((item) => isScalar(item.key) && String(item.key.value) === String(last));
    offset = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
  } else if (isSeq(parent) && typeof last === "number") {
    const item = parent.items[last];
    offset = isNode(item) ? item.range?.[0] : undefined;
  }
  return offset === undefined ? undefined : lineCounter.linePos(offset).line;
}
