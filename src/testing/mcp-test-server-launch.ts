import { extname } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * How to spawn the MCP test server with the running Node: from `src/` (Node strips the types) or, once built,
 * from `dist/`, whichever this file itself was loaded from.
 */
export function mcpTestServerLaunch(): { readonly command: string; readonly args: readonly string[] } {
  const extension = extname(fileURLToPath(import.meta.url));
  const server = fileURLToPath(new URL(`./mcp-test-server${extension}`, import.meta.url));
  return { command: process.execPath, args: [server] };
}
