import type { ScriptedAnswer } from "./scripted-openai-answer.js";

/** The wire formats the scripted provider server speaks, one per provider API. */
export type ScriptedWireFormatName =
  | "openai-chat"
  | "openai-responses"
  | "anthropic"
  | "google"
  | "ollama"
  | "openrouter";

/** What a wire format needs to know of a request it answers. */
export interface ScriptedWireRequest {
  readonly path: string;
  /** The query string without `?` ("" when none). */
  readonly query: string;
  readonly body: unknown;
}

/**
 * One provider API as the scripted server speaks it: which requests are its own, and how a scripted
 * answer, a streamed answer and an error look on its wire.
 */
export interface ScriptedWireFormat {
  readonly name: ScriptedWireFormatName;
  /** The base URL path a client of this provider is configured with, for example `/v1beta`. */
  readonly basePath: string;
  /** True when a POST to this path is a model request of this format. */
  matches(path: string): boolean;
  /** The model the request names (in the body, or in the path for Gemini). */
  requestedModel(request: ScriptedWireRequest): string | null;
  streams(request: ScriptedWireRequest): boolean;
  /** The JSON body of a non-streamed answer. */
  answerBody(answer: ScriptedAnswer): unknown;
  /** The frames of a streamed answer, each complete and in order (SSE events or NDJSON lines). */
  answerFrames(answer: ScriptedAnswer, request: ScriptedWireRequest): string[];
  /** Sent after the last frame of a complete stream (`data: [DONE]` for OpenAI chat), if anything. */
  readonly streamEnd: string;
  readonly streamContentType: string;
  /** Frames an error payload sent mid-stream the way this provider does. */
  errorFrame(payload: unknown): string;
  /** The error body sent when a script's error step gives none. */
  defaultErrorBody(status: number): unknown;
}

export function sseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export function sseEvent(event: string, payload: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;
}

/** The parsed arguments of a scripted call when they are a JSON object, else the text itself. */
export function argumentsObject(argumentsText: string): unknown {
  if (argumentsText === "") return {};
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : argumentsText;
  } catch {
    return argumentsText;
  }
}

/** The usage counts of an answer (OpenAI-shaped in the script) as plain numbers. */
export function usageCounts(answer: ScriptedAnswer): {
  prompt: number;
  completion: number;
  cachedRead: number;
  cacheWrite: number;
  reasoning: number;
} {
  const usage = answer.usage as {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
    completion_tokens_details?: { reasoning_tokens?: number };
  };
  return {
    prompt: usage.prompt_tokens,
    completion: usage.completion_tokens,
    cachedRead: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWrite: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}
