/**
 * One MCP server as `createMcpSource` takes it. The configuration's `mcpServers.<name>` (after loading) has
 * exactly this shape, so the runner passes it through unchanged. Durations are in milliseconds.
 */
export type McpServerDefinition = McpStdioServerDefinition | McpRemoteServerDefinition;

/** How a lost connection to a remote server is re-established: `attempts` tries, doubling delays between. */
export interface McpReconnectPolicy {
  /** Connection attempts per round, the first included. Default 3. */
  readonly attempts: number;
  /** The wait before the second attempt; each later wait doubles. Default 500 ms. */
  readonly initialDelay: number;
  /** The longest wait between attempts, and how long an unavailable server is left alone. Default 10 s. */
  readonly maxDelay: number;
}

export const defaultMcpReconnectPolicy: McpReconnectPolicy = Object.freeze({
  attempts: 3,
  initialDelay: 500,
  maxDelay: 10_000,
});

interface McpServerCommonDefinition {
  /** Patterns (exact names or `*`/`?` globs) of the tools to expose; absent exposes every tool. */
  readonly toolsAllowed?: readonly string[] | null;
  /** Patterns of tools never to expose. */
  readonly toolsDenied?: readonly string[] | null;
  /**
   * The limit for each request to the server. Absent: 30 s for connecting and listing tools, and tool calls
   * are bounded only by the contract's `toolTimeout`.
   */
  readonly requestTimeout?: number | null;
  /** Remote servers only; missing fields take `defaultMcpReconnectPolicy`'s values. */
  readonly reconnect?: Partial<McpReconnectPolicy> | null;
  /** The named tool queue every tool of this server waits in (`queues.<name>`); none when absent. */
  readonly queue?: string | null;
  /**
   * The directories offered to the server as roots (`roots/list`), absolute or relative to the run's working
   * directory. Absent: the run's working directory.
   */
  readonly roots?: readonly string[] | null;
}

export interface McpStdioServerDefinition extends McpServerCommonDefinition {
  readonly type: "stdio";
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to the SDK's small default environment (HOME, PATH, USER...), not to the whole `process.env`. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string | null;
}

export interface McpRemoteServerDefinition extends McpServerCommonDefinition {
  /** `http`: Streamable HTTP (the current MCP transport). `sse`: the older HTTP+SSE transport. */
  readonly type: "http" | "sse";
  readonly url: string;
  /** Sent with every request (for example `Authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
}
