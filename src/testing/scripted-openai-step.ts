/**
 * One scripted answer of the scripted provider server (and of the in-process strict scripted model). The
 * server renders the same step in whichever wire format the request arrived in (OpenAI chat completions or
 * Responses, Anthropic Messages, Gemini, Ollama, OpenRouter). Every variant is plain JSON so that scripts
 * can live in fixture files.
 */
export type ScriptedStep =
  | ScriptedTextStep
  | ScriptedToolCallsStep
  | ScriptedEmptyStep
  | ScriptedReasoningOnlyStep
  | ScriptedErrorStep
  | ScriptedDelayStep
  | ScriptedDisconnectStep
  | ScriptedRawStep;

/** Overrides merged over the default usage block (`prompt_tokens` estimated from the request size). */
export interface ScriptedUsage {
  readonly prompt_tokens?: number;
  readonly completion_tokens?: number;
  readonly total_tokens?: number;
  /** `cache_write_tokens` becomes Anthropic's `cache_creation_input_tokens`; both count within `prompt_tokens`. */
  readonly prompt_tokens_details?: { readonly cached_tokens?: number; readonly cache_write_tokens?: number };
  readonly completion_tokens_details?: { readonly reasoning_tokens?: number };
}

/** How a streamed answer is cut into chunks (SSE events, or NDJSON lines for Ollama). */
export interface ScriptedStreamBehaviour {
  /** At most this many characters of text, reasoning or argument text per delta (default 8). */
  readonly chunkSize?: number;
  /** Send this many chunks, then break the connection without finishing the answer. */
  readonly cutAfterChunks?: number;
  /** Send this many chunks, then `errorFrame` as the provider reports an error mid-stream, then end. */
  readonly errorAfterChunks?: number;
  /** The error event's payload, exactly as the provider would send it (framed by the wire format). */
  readonly errorFrame?: unknown;
}

interface ScriptedAnswerFields {
  readonly usage?: ScriptedUsage;
  /** Overrides the `finish_reason` (defaults: `tool_calls` when there are calls, else `stop`). */
  readonly finishReason?: string;
  readonly stream?: ScriptedStreamBehaviour;
}

export interface ScriptedTextStep extends ScriptedAnswerFields {
  readonly kind: "text";
  readonly text: string;
  /** Sent as `reasoning_content`, as vLLM, DeepSeek and Ollama do (and in each other format's own way). */
  readonly reasoning?: string;
  /** The provider's proof of the reasoning: Anthropic's thinking signature, Gemini's thought signature... */
  readonly reasoningSignature?: string;
}

export interface ScriptedToolCall {
  readonly id?: string;
  readonly name: string;
  /** An object is serialised with JSON.stringify; a string is sent verbatim (for malformed JSON). */
  readonly arguments: Readonly<Record<string, unknown>> | string;
}

export interface ScriptedToolCallsStep extends ScriptedAnswerFields {
  readonly kind: "tool_calls";
  readonly calls: readonly ScriptedToolCall[];
  readonly text?: string;
  readonly reasoning?: string;
  readonly reasoningSignature?: string;
}

export interface ScriptedEmptyStep extends ScriptedAnswerFields {
  readonly kind: "empty";
}

export interface ScriptedReasoningOnlyStep extends ScriptedAnswerFields {
  readonly kind: "reasoning_only";
  readonly reasoning: string;
  readonly reasoningSignature?: string;
}

export interface ScriptedErrorStep {
  readonly kind: "error";
  readonly status: number;
  /** The JSON error body; defaults to a generic error in the wire format of the request. */
  readonly body?: Readonly<Record<string, unknown>>;
  /** Extra response headers, for example `Retry-After`. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Waits `ms` on a real timer, then answers with `then`: only used to make client timeouts happen. */
export interface ScriptedDelayStep {
  readonly kind: "delay";
  readonly ms: number;
  readonly then: ScriptedStep;
}

/** Destroys the connection without answering: the client sees a network error. */
export interface ScriptedDisconnectStep {
  readonly kind: "disconnect";
}

/** Answers with this exact body text (for example unparseable JSON with status 200). */
export interface ScriptedRawStep {
  readonly kind: "raw";
  readonly status?: number;
  readonly body: string;
  readonly contentType?: string;
  /** Sent gzip-compressed (`content-encoding: gzip`), its content-length that of the compressed bytes. */
  readonly gzip?: boolean;
}

/** The argument text a scripted call is sent with. */
export function scriptedArgumentsText(call: ScriptedToolCall): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

/** The id a scripted call is sent with: its own, or a deterministic one from the answer and call index. */
export function scriptedCallId(
  call: { readonly id?: string | undefined },
  answerNumber: number,
  callIndex: number,
): string {
  return call.id ?? `call_${answerNumber}_${callIndex}`;
}

/**
 * A delay step built in code, so that scripts need no object literal with a `then` field (which linters
 * flag; a non-function `then` is not a thenable, so awaiting a step is safe).
 */
export function delayStep(ms: number, then: ScriptedStep): ScriptedDelayStep {
  return { kind: "delay", ms, then };
}
