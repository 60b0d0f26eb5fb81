import {
  AudioContentSchema,
  CallToolResultSchema,
  EmbeddedResourceSchema,
  ImageContentSchema,
  ResourceLinkSchema,
  TextContentSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** The schema of each MCP content part, by its `type`. */
const contentSchemas = {
  text: TextContentSchema,
  image: ImageContentSchema,
  audio: AudioContentSchema,
  resource_link: ResourceLinkSchema,
  resource: EmbeddedResourceSchema,
} as const;
const contentTypes = Object.keys(contentSchemas);

interface SchemaIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/** `content[0].text`: a path as a reader writes it. */
function pathText(base: string, path: readonly PropertyKey[]): string {
  let text = base;
  for (const key of path)
    text += typeof key === "number" ? `[${key}]` : text === "" ? String(key) : `.${String(key)}`;
  return text;
}

function firstIssue(issues: readonly SchemaIssue[], base: string): string {
  const issue = issues[0];
  if (issue === undefined) return "it is not a tools/call result";
  const where = pathText(base, issue.path);
  return where === "" ? issue.message : `${where}: ${issue.message}`;
}

/**
 * What is wrong with a `tools/call` result's envelope, judged by the MCP schema (the SDK's `CallToolResultSchema`),
 * or null when it is a well-formed result. The problem names the place and what was expected: `content is not an
 * array`, `content[1].type "video" is not an MCP content type (text, image, audio, resource_link, resource)`,
 * `content[0].text: Invalid input: expected string, received undefined`. Each content part is judged by the schema of
 * its own type, which names the field it lacks where the schema's union alone would only say that no type matched.
 */
export function mcpCallResultProblem(result: unknown): string | null {
  if (typeof result !== "object" || result === null || Array.isArray(result)) {
    return `the result is ${result === null ? "null" : Array.isArray(result) ? "an array" : `a ${typeof result}`}, not an object`;
  }
  const content = (result as { content?: unknown }).content;
  if (content !== undefined && !Array.isArray(content)) return "content is not an array";
  for (const [index, part] of (content ?? []).entries()) {
    const at = `content[${index}]`;
    if (typeof part !== "object" || part === null || Array.isArray(part)) return `${at} is not an object`;
    const type = (part as { type?: unknown }).type;
    if (typeof type !== "string" || !Object.hasOwn(contentSchemas, type)) {
      return `${at}.type ${JSON.stringify(type) ?? "(missing)"} is not an MCP content type (${contentTypes.join(", ")})`;
    }
    const checked = contentSchemas[type as keyof typeof contentSchemas].safeParse(part);
    if (!checked.success) return firstIssue(checked.error.issues, at);
  }
  const checked = CallToolResultSchema.safeParse(result);
  return checked.success ? null : firstIssue(checked.error.issues, "");
}
