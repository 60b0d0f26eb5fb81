import type { Configuration } from "../config/configuration-schema.js";
import { CharterError } from "../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { McpElicitationHandler, McpSamplingHandler } from "../tools/sources/mcp-client-features.js";
import { createRestToolSource, restToolPrefix } from "../tools/sources/rest-tool-source.js";
import type { RegisteredTool, ToolSource } from "../tools/tool-definition.js";
import { createToolNameFilter } from "../tools/tool-name-filter.js";

/**
 * Starts the tool sources an agent's `tools` list names and returns the tools it selected:
 * - an MCP server name means all of that server's tools, `<server>__<tool>` one of them (stdio, http or sse);
 * - `rest__<name>`, or a bare `<name>` of a configured REST tool, that REST tool.
 * Sources start in parallel; if any fails, every started one is closed and the first failure
 * (MCP_SERVER_FAILED for a server) is thrown: never a silently empty tool list. `unmatched` lists, in order,
 * the references that selected nothing here (no such server or REST tool, or a `<server>__<tool>` the server
 * does not offer): the caller checks them against the tools it adds (built-ins, sub-agents, function tools).
 * `denied` lists those of them that the server's `toolsAllowed`/`toolsDenied` exclude.
 */
export async function startToolSources(
  toolReferences: readonly string[],
  configuration: Configuration,
  options: {
    readonly cwd: string;
    readonly environment: RuntimeEnvironment;
    /** `--trace-mcp`: every JSON-RPC message of every MCP server, with the server's name. */
    readonly traceMcp?: (server: string, direction: "send" | "receive", message: unknown) => void;
    /** Serves the MCP servers' sampling requests; without it, sampling is not offered. */
    readonly sampling?: McpSamplingHandler;
    /** Answers the MCP servers' questions for the user; without it, elicitation is not offered. */
    readonly elicitation?: McpElicitationHandler;
    /**
     * The run's correlation id, sent to every tool source: `x-correlation-id` on REST and remote MCP requests,
     * `_meta` of every MCP tool call. Absent: nothing is sent.
     */
    readonly correlationId?: string;
  },
): Promise<{
  sources: ToolSource[];
  tools: RegisteredTool[];
  unmatched: string[];
  denied: { reference: string; server: string }[];
}> {
  const servers = configuration.mcpServers;
  const restTools = configuration.restTools;
  const wanted = new Map<string, Set<string> | "all">();
  const selectedRest = new Set<string>();
  for (const reference of toolReferences) {
    const restName = restNameOf(reference);
    const isServer = Object.hasOwn(servers, reference);
    const isRest = Object.hasOwn(restTools, restName);
    if (isServer && isRest) {
      throw new CharterError(
        "CONFIGURATION_INVALID",
        `'${reference}' names both an MCP server and a REST tool`,
        {
          details: { key: "tools", reference },
        },
      );
    }
    if (isServer) {
      wanted.set(reference, "all");
      continue;
    }
    if (isRest) {
      selectedRest.add(restName);
      continue;
    }
    const separator = reference.indexOf("__");
    const server = separator > 0 ? reference.slice(0, separator) : null;
    if (server !== null && Object.hasOwn(servers, server)) {
      const current = wanted.get(server);
      if (current === "all") continue;
      const names = current ?? new Set<string>();
      names.add(reference);
      wanted.set(server, names);
    }
    // Anything else is returned as unmatched (it may name a built-in, a sub-agent or a function tool).
  }
  const sources: ToolSource[] = [];
  if (wanted.size > 0) {
    // The MCP SDK is loaded only when an MCP server is used: it is one of the largest things Charter could load.
    const { createMcpSource } = await import("../tools/sources/mcp-source.js");
    for (const name of wanted.keys()) {
      sources.push(
        createMcpSource(name, servers[name]!, {
          cwd: options.cwd,
          environment: options.environment,
          ...(options.traceMcp === undefined
            ? {}
            : { traceMessage: (direction, message) => options.traceMcp?.(name, direction, message) }),
          ...(options.sampling === undefined ? {} : { sampling: options.sampling }),
          ...(options.elicitation === undefined ? {} : { elicitation: options.elicitation }),
          ...(options.correlationId === undefined ? {} : { correlationId: options.correlationId }),
        }),
      );
    }
  }
  if (selectedRest.size > 0) {
    sources.push(
      createRestToolSource(
        Object.fromEntries([...selectedRest].map((name) => [name, restTools[name]!])),
        options.correlationId === undefined ? {} : { correlationId: options.correlationId },
      ),
    );
  }
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
      if (selection === undefined || selection === "all" || selection.has(tool.manifest.name))
        tools.push(tool);
    }
  });
  const selected = new Set(tools.map((tool) => tool.manifest.name));
  const unmatched = toolReferences.filter(
    (reference) =>
      !Object.hasOwn(servers, reference) &&
      !Object.hasOwn(restTools, restNameOf(reference)) &&
      !selected.has(reference),
  );
  return { sources, tools, unmatched, denied: deniedReferences(unmatched, servers) };
}

/**
 * The unmatched `<server>__<tool>` references that the server's own `toolsAllowed`/`toolsDenied` exclude: the
 * configuration removed them on purpose, which is a different mistake from naming a tool that does not exist.
 */
function deniedReferences(
  unmatched: readonly string[],
  servers: Configuration["mcpServers"],
): { reference: string; server: string }[] {
  const denied: { reference: string; server: string }[] = [];
  for (const reference of unmatched) {
    const separator = reference.indexOf("__");
    if (separator <= 0) continue;
    const server = reference.slice(0, separator);
    const definition = Object.hasOwn(servers, server) ? servers[server] : undefined;
    if (definition === undefined) continue;
    if (!createToolNameFilter(definition)(reference.slice(separator + 2), reference))
      denied.push({ reference, server });
  }
  return denied;
}

/** The REST tool a reference may name: `rest__<name>` or a bare `<name>`. */
function restNameOf(reference: string): string {
  return reference.startsWith(restToolPrefix) ? reference.slice(restToolPrefix.length) : reference;
}
