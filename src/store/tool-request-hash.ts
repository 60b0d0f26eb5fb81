import { contentHash } from "../foundation/content-hash.js";

/** What identifies a tool call's request: the tool (and its MCP server) and the arguments. */
export interface ToolRequest {
  /** The MCP server name, null for function and built-in tools. */
  readonly server: string | null;
  readonly tool: string;
  readonly arguments: unknown;
}

/**
 * The canonical hash of a tool request: BLAKE3 of the RFC 8785 JSON of the tool identity and arguments, so
 * that the same call hashes the same whatever the order of its argument keys. It keys the read-only tool
 * cache and the recorded tool results replay looks up.
 */
export function toolRequestHash(request: ToolRequest): string {
  return contentHash({
    arguments: request.arguments ?? null,
    kind: "charter.tool-request",
    server: request.server,
    tool: request.tool,
    v: 1,
  });
}
