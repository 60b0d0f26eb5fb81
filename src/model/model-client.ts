import type { AgentMessage, ProviderMetadata } from "../contract/agent-message.js";
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

/** A piece of a streamed answer, delivered as it arrives. */
export type ModelDelta =
  | { readonly type: "text" | "reasoning"; readonly text: string }
  | { readonly type: "tool_call"; readonly id: string; readonly name: string };

export interface ModelRequest {
  readonly messages: readonly AgentMessage[];
  readonly tools: readonly ModelToolSpec[];
  /** `required` forces a tool call (used by the forced final turn), `none` forbids tools. */
  readonly toolChoice: "auto" | "required" | "none";
  /** The target's request parameters; `null` ones are not sent. */
  readonly parameters: RequestParameters;
  readonly abortSignal?: AbortSignal;
  /** Use the provider's streaming endpoint; the response is the same as without it. */
  readonly stream?: boolean;
  /** With `stream`, called with each text and reasoning delta and once per tool call, as they arrive. */
  readonly onDelta?: (delta: ModelDelta) => void;
  /**
   * The bytes (base64) of a tool message's attachment, by its payload hash; `undefined` when they are not at hand
   * (the attachment is then sent as its text description only).
   */
  readonly attachmentData?: (payloadHash: string) => string | undefined;
  /** How long this call may take before it fails as `timeout` (the contract's `model_timeout_ms`). */
  readonly timeoutMs?: number;
  /** The largest response body accepted; a larger one fails the call (`MODEL_RESPONSE_TOO_LARGE`). */
  readonly maxResponseBytes?: number;
}

export interface ModelUsage {
  /** Every input token, cached ones included. */
  readonly inputTokens: number;
  /** Every output token, reasoning included. */
  readonly outputTokens: number;
  readonly reasoningTokens?: number;
  /** Input tokens read from the provider's prompt cache. */
  readonly cacheReadTokens?: number;
  /** Input tokens written to the provider's prompt cache. */
  readonly cacheWriteTokens?: number;
}

/** One tool call exactly as the provider returned it: the argument text is not parsed here. */
export interface RawToolCall {
  readonly id: string;
  readonly name: string;
  readonly argumentsText: string;
  /** Data the provider needs back with this call in later requests (for example a thought signature). */
  readonly providerMetadata?: ProviderMetadata;
}

/** One reasoning block, with the provider data needed to send it back (for example a thinking signature). */
export interface RawReasoningBlock {
  readonly text: string;
  readonly providerMetadata?: ProviderMetadata;
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
  /** The response body; for a streamed answer, `{ stream: true, chunks }` with every chunk received. */
  readonly rawResponse: unknown;
  /** Present when some reasoning block carries provider data that must be sent back with it. */
  readonly reasoningBlocks?: readonly RawReasoningBlock[];
  /** Provider data attached to the text, when the provider needs it back. */
  readonly textProviderMetadata?: ProviderMetadata;
  /**
   * What the provider package reported it could not send or had to change (for example a parameter the
   * provider's API does not have), so that nothing configured is dropped silently.
   */
  readonly warnings?: readonly string[];
}

export interface ModelClient {
  readonly provider: string;
  readonly model: string;
  /** Resolves with the response, or rejects with a `ModelCallError` carrying its classification. */
  generate(request: ModelRequest): Promise<ModelResponse>;
}
