/** The parts of an MCP `tools/call` result that carry its answer. Read defensively: servers vary. */
interface McpCallResult {
  readonly content?: unknown;
  readonly structuredContent?: unknown;
  /** The pre-2024-11 result shape. */
  readonly toolResult?: unknown;
}

type Part = Readonly<Record<string, unknown>>;

function base64Bytes(data: unknown): number | undefined {
  if (typeof data !== "string") return undefined;
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** A short JSON description of a part the model cannot read as text (an image, audio, a binary resource). */
function describePart(part: Part): string {
  const type = typeof part.type === "string" ? part.type : "unknown";
  switch (type) {
    case "image":
    case "audio":
      return JSON.stringify({ type, mimeType: part.mimeType, bytes: base64Bytes(part.data) });
    case "resource_link":
      return JSON.stringify({ type, uri: part.uri, name: part.name, mimeType: part.mimeType });
    case "resource": {
      const resource = (
        typeof part.resource === "object" && part.resource !== null ? part.resource : {}
      ) as Part;
      const description = JSON.stringify({
        type,
        uri: resource.uri,
        mimeType: resource.mimeType,
        ...(typeof resource.blob === "string" ? { bytes: base64Bytes(resource.blob) } : {}),
      });
      // An embedded text resource is content the model can read: its description, then its text.
      return typeof resource.text === "string" ? `${description}\n${resource.text}` : description;
    }
    default:
      return JSON.stringify({ type });
  }
}

/**
 * The text of an MCP tool result: text parts joined with newlines, other parts as short JSON descriptions.
 * A result with no content parts falls back to its structured content.
 */
export function mcpContentToText(result: McpCallResult): string {
  const parts = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  if (parts.length === 0) {
    if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
    if (result.toolResult !== undefined) {
      return typeof result.toolResult === "string" ? result.toolResult : JSON.stringify(result.toolResult);
    }
    return "";
  }
  const texts: string[] = [];
  for (const part of parts) {
    if (typeof part !== "object" || part === null) continue;
    const record = part as Part;
    texts.push(
      record.type === "text" && typeof record.text === "string" ? record.text : describePart(record),
    );
  }
  return texts.join("\n");
}
