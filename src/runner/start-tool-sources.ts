import type { Configuration } from "../config/configuration-schema.js";
import { createMcpStdioSource } from "../tools/sources/mcp-stdio-source.js";
import type { RegisteredTool, ToolSource } from "../tools/tool-definition.js";

/**
 * Starts the MCP servers an agent's `tools` list names (a server name means all its tools; a
 * `<server>__<tool>` name means that one tool) and returns the tools it selected. Servers start in
 * parallel; if any fails, every started one is closed and the first failure (MCP_SERVER_FAILED) is thrown.
 */
export async function startToolSources(
  toolReferences: readonly string[],
  configuration: Configuration,
  cwd: string,
): Promise<{ sources: ToolSource[]; tools: RegisteredTool[] }> {
  const servers = configuration.mcpServers ?? {};
  const wanted = new Map<string, Set<string> | "all">();
  for (const reference of toolReferences) {
    if (servers[reference] !== undefined) {
      wanted.set(reference, "all");
      continue;
    }
    const separator = reference.indexOf("__");
    const server = separator > 0 ? reference.slice(0, separator) : null;
    if (server !== null && servers[server] !== undefined) {
      const current = wanted.get(server);
      if (current === "all") continue;
      const names = current ?? new Set<string>();
      names.add(reference);
      wanted.set(server, names);
    }
    // Anything else (a built-in or function tool name) is resolved by the caller.
  }
  const sources = [...wanted.keys()].map((name) => {
    const server = servers[name]!;
    return createMcpStdioSource({
      serverName: name,
      command: server.command,
      args: server.args ?? [],
      env: server.env ?? {},
      cwd: server.cwd ?? cwd,
    });
  });
  const started = await Promise.allSettled(sources.map((source) => source.start()));
  const failure = started.find((outcome) => outcome.status === "rejected");
  if (failure !== undefined) {
    await Promise.allSettled(sources.map((source) => source.close()));
    throw (failure as PromiseRejectedResult).reason;
  }
  const tools: RegisteredTool[] = [];
  started.forEach((outcome, index) => {
    const selection = wanted.get(sources[index]!.name);
    for (const tool of (outcome as PromiseFulfilledResult<readonly RegisteredTool[]>).value) {
      if (selection === "all" || selection?.has(tool.manifest.name)) tools.push(tool);
    }
  });
  return { sources, tools };
}
