import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { McpServerHealth } from "../mcp-server-health.js";
import type { McpElicitationHandler, McpSamplingHandler } from "./mcp-client-features.js";
import { createMcpSource, type McpToolSource } from "./mcp-source.js";

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
  readonly toolsAllowed?: readonly string[];
  readonly toolsDenied?: readonly string[];
  readonly queue?: string;
  /** The directories offered as roots; default the working directory. */
  readonly roots?: readonly string[];
  /** Serves the server's sampling requests; absent, sampling is not offered. */
  readonly sampling?: McpSamplingHandler;
  /** Answers the server's questions for the user; absent, elicitation is not offered. */
  readonly elicitation?: McpElicitationHandler;
  readonly environment?: RuntimeEnvironment;
  readonly onHealthChange?: (health: McpServerHealth) => void;
}

/**
 * A tool source over one MCP server on stdio: `createMcpSource` with a `stdio` definition. `start()` spawns the
 * server; a server that cannot start or list its tools rejects with MCP_SERVER_FAILED (with its exit code and
 * the tail of its stderr), never an empty list. A server that dies later makes its calls fail as data.
 */
export function createMcpStdioSource(options: McpStdioSourceOptions): McpToolSource {
  return createMcpSource(
    options.serverName,
    {
      type: "stdio",
      command: options.command,
      args: options.args ?? [],
      env: options.env ?? {},
      cwd: options.cwd ?? null,
      toolsAllowed: options.toolsAllowed ?? null,
      toolsDenied: options.toolsDenied ?? null,
      queue: options.queue ?? null,
      roots: options.roots ?? null,
    },
    {
      ...(options.environment === undefined ? {} : { environment: options.environment }),
      ...(options.onHealthChange === undefined ? {} : { onHealthChange: options.onHealthChange }),
      ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
      ...(options.callTimeoutMs === undefined ? {} : { callTimeoutMs: options.callTimeoutMs }),
      ...(options.sampling === undefined ? {} : { sampling: options.sampling }),
      ...(options.elicitation === undefined ? {} : { elicitation: options.elicitation }),
    },
  );
}
