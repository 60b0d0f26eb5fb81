import type {
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ReasoningPart,
  LanguageModelV4TextPart,
  LanguageModelV4ToolCallPart,
  SharedV4ProviderOptions,
} from "@ai-sdk/provider";
import type { AgentMessage, ProviderMetadata, ToolInvocation } from "../../contract/agent-message.js";
import type { ToolResultMedia } from "./provider-adapter.js";

/** How tool-result attachments are sent: which kinds the provider accepts, and where their bytes are. */
export interface AttachmentSending {
  readonly media: ToolResultMedia;
  readonly attachmentData: (payloadHash: string) => string | undefined;
}

type AssistantPart = LanguageModelV4TextPart | LanguageModelV4ReasoningPart | LanguageModelV4ToolCallPart;

/** Sent as the result of an assistant tool call the conversation never answered. */
export const missingToolResultText = "(tool failed: no result was recorded for this call)";

// Canonical messages are immutable, so each is converted once for the whole session.
const convertedMessages = new WeakMap<AgentMessage, LanguageModelV4Message>();

/**
 * The argument text sent back for a call: the provider's own text when it is a JSON object (so the
 * conversation is replayed to the provider exactly as it was produced), otherwise the canonical object
 * (the call was repaired, or the provider sent "" for a tool without arguments).
 */
function toolCallInput(call: ToolInvocation): unknown {
  const text = call.raw_payload?.arguments_text;
  if (typeof text === "string" && text !== "") {
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return text;
    } catch {
      // Repaired arguments: the canonical object below is what was executed.
    }
  }
  return call.arguments;
}

/** Provider metadata as the SDK's provider options of the same part: how it goes back to the provider. */
function providerOptions(metadata: unknown): { providerOptions?: SharedV4ProviderOptions } {
  return typeof metadata === "object" && metadata !== null
    ? { providerOptions: metadata as SharedV4ProviderOptions }
    : {};
}

function reasoningParts(message: AgentMessage): LanguageModelV4ReasoningPart[] {
  if (message.reasoning_blocks !== undefined) {
    return message.reasoning_blocks.map((block) => ({
      type: "reasoning",
      text: block.text,
      ...providerOptions(block.provider_metadata),
    }));
  }
  return message.reasoning !== undefined && message.reasoning !== ""
    ? [{ type: "reasoning", text: message.reasoning }]
    : [];
}

/**
 * A tool message with attachments the provider accepts (and whose bytes are at hand): its text, then each of them
 * as a file part. Anything else is its text alone, which describes the attachments.
 */
function convertToolMessageWithAttachments(
  message: AgentMessage,
  sending: AttachmentSending | undefined,
): LanguageModelV4Message | null {
  if (sending === undefined || message.attachments === undefined) return null;
  const files: { type: "file"; data: { type: "data"; data: string }; mediaType: string }[] = [];
  for (const attachment of message.attachments) {
    if (!sending.media[attachment.type]) continue;
    const data = sending.attachmentData(attachment.payload_hash);
    if (data === undefined) continue;
    files.push({ type: "file", data: { type: "data", data }, mediaType: attachment.media_type });
  }
  if (files.length === 0) return null;
  return {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: message.tool_call_id ?? "",
        toolName: message.tool_name ?? "",
        output: { type: "content", value: [{ type: "text", text: message.content }, ...files] },
      },
    ],
  };
}

function convertMessage(message: AgentMessage, sending?: AttachmentSending): LanguageModelV4Message {
  // Whether attachments are sent depends on the provider: such messages are converted afresh for each request.
  const withAttachments = convertToolMessageWithAttachments(message, sending);
  if (withAttachments !== null) return withAttachments;
  const cached = convertedMessages.get(message);
  if (cached !== undefined) return cached;
  let converted: LanguageModelV4Message;
  switch (message.role) {
    case "system":
      converted = { role: "system", content: message.content };
      break;
    case "user":
      converted = { role: "user", content: [{ type: "text", text: message.content }] };
      break;
    case "assistant": {
      const content: AssistantPart[] = reasoningParts(message);
      if (message.content !== "" || message.tool_calls.length === 0) {
        content.push({ type: "text", text: message.content, ...providerOptions(message.provider_metadata) });
      }
      for (const call of message.tool_calls) {
        content.push({
          type: "tool-call",
          toolCallId: call.id,
          toolName: call.name,
          input: toolCallInput(call),
          ...providerOptions(call.raw_payload?.provider_metadata as ProviderMetadata | undefined),
        });
      }
      converted = { role: "assistant", content };
      break;
    }
    case "tool":
      converted = {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: message.tool_call_id ?? "",
            toolName: message.tool_name ?? "",
            output: { type: "text", value: message.content },
          },
        ],
      };
      break;
  }
  convertedMessages.set(message, converted);
  return converted;
}

function missingResult(callId: string, toolName: string): LanguageModelV4Message {
  return {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: callId,
        toolName,
        output: { type: "text", value: missingToolResultText },
      },
    ],
  };
}

function unmatchedResultsNote(unmatched: readonly AgentMessage[]): LanguageModelV4Message {
  const text = unmatched
    .map(
      (message) =>
        `Result for tool call ${message.tool_call_id ?? "(no id)"} (${message.tool_name ?? "unknown tool"}):\n${message.content}`,
    )
    .join("\n\n");
  return { role: "user", content: [{ type: "text", text }] };
}

/**
 * Converts the canonical conversation to the AI SDK prompt, keeping it provider-valid: every assistant
 * tool call is answered by exactly one tool result directly after it. A call left unanswered gets
 * `missingToolResultText`; a tool message that answers no open call (for example the validation error
 * for a call the protocol adapter rejected, which never entered the canonical message, or a second answer
 * to the same call) would be refused by the provider, so its text is passed on as a user message after
 * the tool results instead of being lost.
 */
export function toLanguageModelPrompt(
  messages: readonly AgentMessage[],
  sending?: AttachmentSending,
): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [];
  let openCalls: Map<string, string> | null = null;
  let unmatched: AgentMessage[] = [];

  const closeOpenCalls = () => {
    if (openCalls !== null) {
      for (const [callId, toolName] of openCalls) prompt.push(missingResult(callId, toolName));
      openCalls = null;
    }
    if (unmatched.length > 0) {
      prompt.push(unmatchedResultsNote(unmatched));
      unmatched = [];
    }
  };

  for (const message of messages) {
    if (message.role === "tool") {
      const callId = message.tool_call_id;
      if (openCalls !== null && callId !== undefined && openCalls.has(callId)) {
        openCalls.delete(callId);
        prompt.push(convertMessage(message, sending));
      } else {
        unmatched.push(message);
      }
      continue;
    }
    closeOpenCalls();
    prompt.push(convertMessage(message));
    if (message.role === "assistant" && message.tool_calls.length > 0) {
      openCalls = new Map();
      for (const call of message.tool_calls) openCalls.set(call.id, call.name);
    }
  }
  closeOpenCalls();
  return prompt;
}
