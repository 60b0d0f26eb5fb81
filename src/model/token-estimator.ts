import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import type { AgentMessage } from "../contract/agent-message.js";
import type { ModelToolSpec } from "./model-client.js";

/** Role markers and separators every chat message costs beside its text. */
export const messageOverheadTokens = 4;
/** The wrapper every function tool definition costs beside its name, description and schema. */
export const toolOverheadTokens = 8;

// Text from models and tools may contain special-token spellings such as "<|endoftext|>"; they are
// counted as ordinary text instead of making the tokenizer throw.
const encodeOptions = { disallowedSpecial: new Set<string>() };

export interface TokenEstimator {
  /** Tokens of a text in the o200k_base encoding. */
  countText(text: string): number;
  /** Tokens of one message: content, reasoning, tool call names and argument JSON, plus overhead. */
  countMessage(message: AgentMessage): number;
  countMessages(messages: readonly AgentMessage[]): number;
  /** Tokens the tool definitions add to every request. */
  countTools(tools: readonly ModelToolSpec[]): number;
}

/**
 * A token estimator over gpt-tokenizer's o200k_base encoding (only that encoding's module is loaded,
 * to keep start-up fast). Messages and tool lists are immutable, so each is counted once and
 * remembered: counting a growing conversation every turn only tokenises the new messages.
 */
export function createTokenEstimator(): TokenEstimator {
  const messageCounts = new WeakMap<AgentMessage, number>();
  const toolCounts = new WeakMap<readonly ModelToolSpec[], number>();

  function countText(text: string): number {
    return text === "" ? 0 : countTokens(text, encodeOptions);
  }

  function countMessage(message: AgentMessage): number {
    const cached = messageCounts.get(message);
    if (cached !== undefined) return cached;
    let count = messageOverheadTokens + countText(message.content);
    if (message.reasoning !== undefined) count += countText(message.reasoning);
    for (const call of message.tool_calls) {
      const text = call.raw_payload?.arguments_text;
      count +=
        countText(call.name) + countText(typeof text === "string" ? text : JSON.stringify(call.arguments));
    }
    messageCounts.set(message, count);
    return count;
  }

  return {
    countText,
    countMessage,
    countMessages(messages) {
      let count = 0;
      for (const message of messages) count += countMessage(message);
      return count;
    },
    countTools(tools) {
      const cached = toolCounts.get(tools);
      if (cached !== undefined) return cached;
      let count = 0;
      for (const tool of tools) {
        count +=
          toolOverheadTokens +
          countText(tool.name) +
          countText(tool.description) +
          countText(JSON.stringify(tool.inputSchema));
      }
      toolCounts.set(tools, count);
      return count;
    },
  };
}
