/**
 * The canonical message the runtime executes (seed 002 §4.3, §4.4). Provider payloads never reach the
 * session: the protocol adapter turns each response into one of these (Invariant A).
 */
export type AgentRole = "system" | "user" | "assistant" | "tool";

/**
 * Provider data the AI SDK attaches to one part of a response (keyed by provider, for example
 * `{ anthropic: { signature } }`), which that provider needs back on the same part in later requests.
 */
export type ProviderMetadata = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/** One reasoning block as the provider returned it, with what the provider needs back to accept it again. */
export interface ReasoningBlock {
  readonly text: string;
  /** For example Anthropic's thinking signature or redacted thinking, Gemini's thought signature, OpenAI's encrypted reasoning. */
  readonly provider_metadata?: ProviderMetadata;
}

export interface ToolInvocation {
  readonly id: string;
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** `provider/model` of the target that produced the call. */
  readonly source_model: string;
  /**
   * The call as the provider sent it, for audit: the unparsed `arguments_text`, and `provider_metadata` when the
   * provider needs data sent back with the call (for example Gemini's thought signature).
   */
  readonly raw_payload: Readonly<Record<string, unknown>> | null;
}

/**
 * An image or audio clip a tool returned beside its text. The message holds only its description; the bytes are a
 * raw payload of the run (`{ type, media_type, data }` with base64 `data`), stored by content hash, so the
 * transcript stays small and an offline replay still has them.
 */
export interface ContentAttachment {
  readonly type: "image" | "audio";
  /** For example `image/png`, `audio/wav`. */
  readonly media_type: string;
  /** The decoded size. */
  readonly bytes: number;
  /** The content hash of the raw payload holding the bytes. */
  readonly payload_hash: string;
}

export interface AgentMessage {
  readonly role: AgentRole;
  readonly content: string;
  readonly tool_calls: readonly ToolInvocation[];
  /** For `tool` messages: the call this message answers. */
  readonly tool_call_id?: string;
  /** For `tool` messages: the tool's name. */
  readonly tool_name?: string;
  /**
   * For `tool` messages: images and audio the tool returned. A provider that accepts them in tool results is sent
   * them beside `content`; others get `content` alone, which describes them.
   */
  readonly attachments?: readonly ContentAttachment[];
  /** Reasoning text the model returned beside its answer, kept so that the conversation stays provider-valid. */
  readonly reasoning?: string;
  /**
   * The reasoning block by block, present only when some block carries provider metadata (Anthropic thinking
   * signatures must come back unchanged, or the provider refuses the conversation). `reasoning` holds the
   * same text joined.
   */
  readonly reasoning_blocks?: readonly ReasoningBlock[];
  /** Provider metadata of the message's text, when the provider attached some (for example a thought signature). */
  readonly provider_metadata?: ProviderMetadata;
}

// The constructors list keys in sorted order: canonical JSON then takes its JSON.stringify fast path.
export function systemMessage(content: string): AgentMessage {
  return { content, role: "system", tool_calls: [] };
}

export function userMessage(content: string): AgentMessage {
  return { content, role: "user", tool_calls: [] };
}

export function toolMessage(
  callId: string,
  toolName: string,
  content: string,
  attachments?: readonly ContentAttachment[],
): AgentMessage {
  if (attachments !== undefined && attachments.length > 0) {
    return { attachments, content, role: "tool", tool_call_id: callId, tool_calls: [], tool_name: toolName };
  }
  return { content, role: "tool", tool_call_id: callId, tool_calls: [], tool_name: toolName };
}
