import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ToolManifestEntry } from "../../contract/execution-contract.js";
import { CharterError } from "../../foundation/charter-error.js";
import { deepFreeze } from "../../foundation/deep-freeze.js";
import { describeError } from "../describe-error.js";
import type { RegisteredTool, ToolOutput, ToolSource } from "../tool-definition.js";
import { ExitObservingStdioTransport } from "./exit-observing-stdio-transport.js";
import { mcpContentToText } from "./mcp-content-to-text.js";

export interface McpStdioSourceOptions {
  /** Prefixes the exposed tool names: `<serverName>__<tool>`. */
  readonly serverName: string;
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to the SDK's small default environment (HOME, PATH, USER...), not to the whole `process.env`. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Limit for initialising the session, and again for listing the tools. Default 30 s. */
  readonly startTimeoutMs?: number;
  /**
   * A backstop for each call. The pipeline's `tool_timeout_ms` is what normally ends a slow call, by aborting
   * its signal; this only replaces the SDK's 60 s default so that it never cuts a longer contract timeout short.
   */
  readonly callTimeoutMs?: number;
}

type StartPhase = "start" | "list_tools";

const maxListPages = 1000;

async function listAllTools(client: Client, timeout: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  const seenCursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < maxListPages; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) return tools;
    if (seenCursors.has(cursor)) throw new Error(`the server repeated the pagination cursor '${cursor}'`);
    seenCursors.add(cursor);
  }
  throw new Error(`the server's tool list did not end within ${maxListPages} pages`);
}

/**
 * A tool source over one MCP server on stdio, through the official SDK client. `start()` spawns the server,
 * initialises, lists every tool (following pagination) and exposes each as `<server>__<tool>`. A server
 * that cannot start or list its tools rejects with MCP_SERVER_FAILED, never an empty list. A server that dies
 * later makes its calls report errors (`isError`), never throw.
 */
export function createMcpStdioSource(options: McpStdioSourceOptions): ToolSource {
  const server = options.serverName;
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const callTimeoutMs = options.callTimeoutMs ?? 600_000;
  let client: Client | null = null;
  let transport: ExitObservingStdioTransport | null = null;

  function startFailure(
    phase: StartPhase,
    error: unknown,
    observed: ExitObservingStdioTransport,
  ): CharterError {
    const reason = describeError(error);
    const exit = observed.exit;
    const stderrTail = observed.stderrTail.trim();
    const ended =
      exit === null
        ? ""
        : exit.exitCode !== null
          ? ` (exited with code ${exit.exitCode})`
          : ` (killed by ${exit.signal})`;
    const what = phase === "start" ? "failed to start" : "failed to list its tools";
    return new CharterError("MCP_SERVER_FAILED", `MCP server '${server}' ${what}: ${reason}${ended}`, {
      details: {
        server,
        phase,
        reason,
        ...(exit?.exitCode !== null && exit?.exitCode !== undefined ? { exitCode: exit.exitCode } : {}),
        ...(exit?.signal ? { signal: exit.signal } : {}),
        ...(stderrTail === "" ? {} : { stderrTail }),
      },
      cause: error,
    });
  }

  function callFailure(error: unknown): ToolOutput {
    const exit = transport?.exit ?? null;
    if (exit !== null) {
      const how = exit.exitCode !== null ? `with code ${exit.exitCode}` : `on ${exit.signal}`;
      return { text: `MCP server '${server}' is not running (it exited ${how})`, isError: true };
    }
    return { text: `MCP server '${server}': ${describeError(error)}`, isError: true };
  }

  function registered(tool: Tool): RegisteredTool {
    const manifest: ToolManifestEntry = deepFreeze({
      name: `${server}__${tool.name}`,
      description: tool.description ?? tool.title ?? "",
      input_schema: tool.inputSchema as Record<string, unknown>,
      source: { kind: "mcp" as const, server, tool: tool.name },
      annotations: tool.annotations === undefined ? null : { ...tool.annotations },
    });
    return {
      manifest,
      async execute(input, context) {
        const active = client;
        if (active === null) return { text: `MCP server '${server}' is not running`, isError: true };
        try {
          const result = await active.callTool({ name: tool.name, arguments: { ...input } }, undefined, {
            signal: context.signal,
            timeout: callTimeoutMs,
          });
          return { text: mcpContentToText(result), isError: result.isError === true };
        } catch (error) {
          return callFailure(error);
        }
      },
    };
  }

  return {
    name: server,

    async start() {
      if (client !== null) {
        throw new CharterError("INTERNAL_ERROR", `MCP server '${server}' is already started`, {
          details: { server },
        });
      }
      const observed = new ExitObservingStdioTransport({
        command: options.command,
        args: [...(options.args ?? [])],
        env: { ...options.env },
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      });
      const started = new Client({ name: "charter", version: "0.1.0" }, { capabilities: {} });
      let phase: StartPhase = "start";
      try {
        await started.connect(observed, { timeout: startTimeoutMs });
        phase = "list_tools";
        const tools = await listAllTools(started, startTimeoutMs);
        client = started;
        transport = observed;
        return tools.map(registered);
      } catch (error) {
        // Lets the last stderr chunks, piped through the SDK's stream, arrive before the tail is read.
        await new Promise((resolve) => setImmediate(resolve));
        const failure = startFailure(phase, error, observed);
        await started.close().catch(() => {});
        throw failure;
      }
    },

    async close() {
      const active = client;
      client = null;
      if (active !== null) await active.close().catch(() => {});
    },
  };
}
