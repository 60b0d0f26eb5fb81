/**
 * The canonical message the runtime executes (seed 002 §4.3, §4.4). Provider payloads never reach the
 * session: the protocol adapter turns each response into one of these (Invariant A).
 */
export type AgentRole = "system" | "user" | "assistant" | "tool";

export interface ToolInvocation {
  readonly id: string;
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** `provider/model` of the target that produced the call. */
  readonly source_model: string;
  /** The call as the provider sent it (for example the unparsed argument text), for audit. */
  readonly raw_payload: Readonly<Record<string, unknown>> | null;
}

export interface AgentMessage {
  readonly role: AgentRole;
  readonly content: string;
  readonly tool_calls: readonly ToolInvocation[];
  /** For `tool` messages: the call this message answers. */
  readonly tool_call_id?: string;
  /** For `tool` messages: the tool's name. */
  readonly tool_name?: string;
  /** Reasoning text the model returned beside its answer, kept so that the conversation stays provider-valid. */
  readonly reasoning?: string;
}

// The constructors list keys in sorted order: canonical JSON then takes its JSON.stringify fast path.
export function systemMessage(content: string): AgentMessage {
  return { content, role: "system", tool_calls: [] };
}

export function userMessage(content: string): AgentMessage {
  return { content, role: "user", tool_calls: [] };
}

export function toolMessage(callId: string, toolName: string, content: string): AgentMessage {
  return { content, role: "tool", tool_call_id: callId, tool_calls: [], tool_name: toolName };
}
