import type { ToolManifestEntry } from "../contract/execution-contract.js";
import type { ErrorCode } from "../foundation/error-codes.js";

/** An image or audio clip a tool returned, beside the text that describes it. */
export interface ToolMedia {
  readonly type: "image" | "audio";
  readonly mediaType: string;
  /** Base64. */
  readonly data: string;
}

/** A binary resource a tool returned (an MCP `resource` part with a `blob`). */
export interface ToolBinaryResource {
  readonly uri: string;
  readonly mediaType: string | null;
  /** Base64. */
  readonly data: string;
}

/** What a tool source returns from one execution. A tool reporting an error is data, not an exception. */
export interface ToolOutput {
  readonly text: string;
  readonly isError: boolean;
  /** Images and audio, sent to the model beside `text` when its provider accepts them. */
  readonly media?: readonly ToolMedia[];
  /** Binary resources, stored behind `tool_output` handles by the pipeline. */
  readonly binaryResources?: readonly ToolBinaryResource[];
  /**
   * Accounting entries of work done on the tool's behalf, such as the model calls of a child run (the
   * `tool_output` extraction mode, sub-agents). The session appends them to the run's accounting.
   */
  readonly accounting?: readonly unknown[];
  /** With `isError`: the code of the failure; default TOOL_EXECUTION_FAILED. */
  readonly errorCode?: ErrorCode;
  /** With `APPROVAL_REQUIRED`: the question the tool's server asked, which the run stops to have answered. */
  readonly question?: ToolQuestion;
}

/** A question a tool's server asked the user while it ran (MCP elicitation). */
export interface ToolQuestion {
  readonly server: string;
  readonly message: string;
  readonly requested_schema: Readonly<Record<string, unknown>>;
}

export interface ToolExecutionContext {
  readonly signal: AbortSignal;
  readonly runId: string;
  readonly callId: string;
  /**
   * Whether the call may be sent again when its first delivery is uncertain (a connection lost in flight): the
   * tool's idempotency class as configuration resolved it (read-only or idempotent). Absent, the source decides
   * from the tool's own annotations.
   */
  readonly repeatable?: boolean;
}

/** A tool as the registry holds it: its manifest entry (what the contract hashes) and how to run it. */
export interface RegisteredTool {
  readonly manifest: ToolManifestEntry;
  /** The named tool queue that bounds this tool's concurrent executions (`queueStage`); none when absent. */
  readonly queue?: string | null;
  execute(input: Readonly<Record<string, unknown>>, context: ToolExecutionContext): Promise<ToolOutput>;
}

/** A source of tools (an MCP server, REST tools, function tools, built-ins). Started before preflight. */
export interface ToolSource {
  readonly name: string;
  /**
   * Starts the source and lists its tools; rejects with a CharterError (MCP_SERVER_FAILED for an MCP server,
   * CONFIGURATION_INVALID for a REST tool definition). An MCP server without a usable tool is such an error,
   * never an empty list.
   */
  start(): Promise<readonly RegisteredTool[]>;
  close(): Promise<void>;
}
