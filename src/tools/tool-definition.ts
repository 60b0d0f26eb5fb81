import type { ToolManifestEntry } from "../contract/execution-contract.js";

/** What a tool source returns from one execution. A tool reporting an error is data, not an exception. */
export interface ToolOutput {
  readonly text: string;
  readonly isError: boolean;
}

export interface ToolExecutionContext {
  readonly signal: AbortSignal;
  readonly runId: string;
  readonly callId: string;
}

/** A tool as the registry holds it: its manifest entry (what the contract hashes) and how to run it. */
export interface RegisteredTool {
  readonly manifest: ToolManifestEntry;
  execute(input: Readonly<Record<string, unknown>>, context: ToolExecutionContext): Promise<ToolOutput>;
}

/** A source of tools (an MCP server, function tools, built-ins). Sources are started before preflight. */
export interface ToolSource {
  readonly name: string;
  /** Starts the source and lists its tools; rejects with a CharterError (code MCP_SERVER_FAILED for MCP). */
  start(): Promise<readonly RegisteredTool[]>;
  close(): Promise<void>;
}
