import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

const maxListPages = 1000;

/** Every tool a server lists, following pagination cursors; a cursor seen twice is an error, not a loop. */
export async function listMcpTools(
  client: Client,
  options: { readonly timeout: number; readonly signal?: AbortSignal },
): Promise<Tool[]> {
  const tools: Tool[] = [];
  const seenCursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < maxListPages; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor }, options);
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) return tools;
    if (seenCursors.has(cursor)) throw new Error(`the server repeated the pagination cursor '${cursor}'`);
    seenCursors.add(cursor);
  }
  throw new Error(`the server's tool list did not end within ${maxListPages} pages`);
}
