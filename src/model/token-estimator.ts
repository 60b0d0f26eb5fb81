import { createRequire } from "node:module";
import type { AgentMessage } from "../contract/agent-message.js";
import type { ModelToolSpec } from "./model-client.js";

/** Role markers and separators every chat message costs beside its text. */
export const messageOverheadTokens = 4;
/** The wrapper every function tool definition costs beside its name, description and schema. */
export const toolOverheadTokens = 8;

// Text from models and tools may contain special-token spellings such as "<|endoftext|>"; they are
// counted as ordinary text instead of making the tokenizer throw.
const encodeOptions = { disallowedSpecial: new Set<string>() };

type CountTokens = (text: string, options: typeof encodeOptions) => number;
let loadedCountTokens: CountTokens | undefined;

/**
 * The o200k_base encoding's tables are the largest thing Charter loads (tens of MB, most of a second of CPU on a
 * busy machine): they are loaded on the first count, synchronously (counting is synchronous), so commands that
 * count nothing never pay for them.
 */
function countTokens(text: string, options: typeof encodeOptions): number {
  loadedCountTokens ??= (
    createRequire(import.meta.url)("gpt-tokenizer/encoding/o200k_base") as { countTokens: CountTokens }
  ).countTokens;
  return loadedCountTokens(text, options);
}
const shortTextLimit = 32;
const rememberedTextLimit = 1024;

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

  // Short texts recur turn after turn (tool names, short answers and arguments): their counts are remembered,
  // the map emptied when full.
  const shortTextCounts = new Map<string, number>();

  function countText(text: string): number {
    if (text === "") return 0;
    if (text.length > shortTextLimit) return countTokens(text, encodeOptions);
    let count = shortTextCounts.get(text);
    if (count === undefined) {
      count = countTokens(text, encodeOptions);
      if (shortTextCounts.size >= rememberedTextLimit) shortTextCounts.clear();
      shortTextCounts.set(text, count);
    }
    return count;
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
