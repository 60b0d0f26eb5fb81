import type { AgentMessage } from "../contract/agent-message.js";
import type { RequestParameters } from "../contract/execution-contract.js";

/**
 * Charter's provider specification: the one interface every model adapter implements. The session
 * only ever sees this; concrete providers live in `model/providers/` and are wired in by the runner.
 */
export interface ModelToolSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

export interface ModelRequest {
  readonly messages: readonly AgentMessage[];
  readonly tools: readonly ModelToolSpec[];
  /** `required` forces a tool call (used by the forced final turn), `none` forbids tools. */
  readonly toolChoice: "auto" | "required" | "none";
  readonly parameters: RequestParameters;
  readonly abortSignal?: AbortSignal;
}

export interface ModelUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly reasoningTokens?: number;
  readonly cacheReadTokens?: number;
}

/** One tool call exactly as the provider returned it: the argument text is not parsed here. */
export interface RawToolCall {
  readonly id: string;
  readonly name: string;
  readonly argumentsText: string;
}

export interface ModelResponse {
  readonly text: string;
  readonly reasoning: string;
  readonly toolCalls: readonly RawToolCall[];
  /** Reported by the provider; absent when it reported none. */
  readonly usage: ModelUsage | null;
  readonly finishReason: string;
  readonly responseId: string | null;
  /** The request body sent and the response body received, for the transcript (secrets never included). */
  readonly rawRequest: unknown;
  readonly rawResponse: unknown;
}

export interface ModelClient {
  readonly provider: string;
  readonly model: string;
  /** Resolves with the response, or rejects with a `ModelCallError` carrying its classification. */
  generate(request: ModelRequest): Promise<ModelResponse>;
}
