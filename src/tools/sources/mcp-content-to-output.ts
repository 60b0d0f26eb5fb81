import type { ToolBinaryResource, ToolMedia } from "../tool-definition.js";
import { mcpContentToText } from "./mcp-content-to-text.js";

type Part = Readonly<Record<string, unknown>>;

function isRecord(value: unknown): value is Part {
  return typeof value === "object" && value !== null;
}

/** The parts of an MCP `tools/call` result that carry its answer. */
interface McpCallResult {
  readonly content?: unknown;
  readonly structuredContent?: unknown;
  readonly toolResult?: unknown;
}

/**
 * An MCP tool result as a tool output: the text the model reads (text parts, and a short description of every
 * other part), the images and audio clips with their bytes (which a provider that accepts them is sent as well),
 * and the binary resources (`resource` parts with a `blob`), which the pipeline stores behind `tool_output`
 * handles instead of dropping them. A binary resource is described where it is stored, so it is left out of the
 * text here.
 */
export function mcpContentToOutput(result: McpCallResult): {
  readonly text: string;
  readonly media: readonly ToolMedia[];
  readonly binaryResources: readonly ToolBinaryResource[];
} {
  const parts = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const media: ToolMedia[] = [];
  const binaryResources: ToolBinaryResource[] = [];
  const described: unknown[] = [];
  for (const part of parts) {
    if (!isRecord(part)) continue;
    if ((part.type === "image" || part.type === "audio") && typeof part.data === "string") {
      media.push({
        type: part.type,
        mediaType: typeof part.mimeType === "string" ? part.mimeType : `${part.type}/octet-stream`,
        data: part.data,
      });
    }
    const resource = part.type === "resource" && isRecord(part.resource) ? part.resource : null;
    if (resource !== null && typeof resource.blob === "string") {
      binaryResources.push({
        uri: typeof resource.uri === "string" ? resource.uri : "",
        mediaType: typeof resource.mimeType === "string" ? resource.mimeType : null,
        data: resource.blob,
      });
      continue;
    }
    described.push(part);
  }
  const text =
    described.length === 0 && parts.length > 0 ? "" : mcpContentToText({ ...result, content: described });
  return { text, media, binaryResources };
}
