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

/**
 * Tool definitions (names, descriptions, schemas) are the same in every run of an agent, and a server builds a new
 * list for each run: their counts are remembered by the process, for the default tokenizer (a counter given its own
 * `countPiece` keeps none), one map per way of counting long runs, emptied when full.
 */
const toolTextCounts = { bounded: new Map<string, number>(), whole: new Map<string, number>() };
const rememberedToolTexts = 2048;
/** Longer tool texts are counted every time rather than kept (the map holds its keys). */
const rememberedToolTextCharacters = 8192;

/**
 * A run of one character class (letters, punctuation and symbols, or whitespace) at least this long is one
 * pre-token for the o200k_base encoding, and byte-pair merging costs more than linear time in a pre-token's
 * length: 100 KB of letters without a space took 13 s, 1 MB never finished. Such runs are estimated instead.
 */
export const longRunCharacters = 64;
/** A long run is cut into pieces of this many characters; at most `sampledPieces` of them are tokenised. */
export const runPieceCharacters = 64;
export const sampledPieces = 16;

// One character class repeated longRunCharacters times or more: the pre-tokens whose cost grows superlinearly.
// Digits are left out: the encoding splits them into groups of three.
const longRunPattern = new RegExp(
  `[\\p{L}\\p{M}]{${longRunCharacters},}|[^\\s\\p{L}\\p{N}]{${longRunCharacters},}|\\s{${longRunCharacters},}`,
  "gu",
);

/** Counts the tokens of one piece of text: the tokenizer itself, replaceable to measure the work it is given. */
export type CountPieceTokens = (piece: string) => number;

export interface TokenEstimatorOptions {
  /**
   * Estimate long single-class runs from samples (the default) instead of tokenising them whole. Off only to
   * replay runs recorded under contract schema version 2, which counted every run whole.
   */
  readonly boundLongRuns?: boolean;
  /** The tokenizer call; defaults to gpt-tokenizer's o200k_base `countTokens`. */
  readonly countPiece?: CountPieceTokens;
  /**
   * Where the counts of tool descriptions and schemas are remembered, shared by the estimators given the same map
   * (they must count alike); default the process's own for the default tokenizer, none of its own otherwise.
   */
  readonly toolTextCounts?: Map<string, number>;
}

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
export function createTokenEstimator(options: TokenEstimatorOptions = {}): TokenEstimator {
  const messageCounts = new WeakMap<AgentMessage, number>();
  const toolCounts = new WeakMap<readonly ModelToolSpec[], number>();
  const countPiece: CountPieceTokens = options.countPiece ?? ((piece) => countTokens(piece, encodeOptions));
  const boundLongRuns = options.boundLongRuns ?? true;

  // Short texts recur turn after turn (tool names, short answers and arguments): their counts are remembered,
  // the map emptied when full.
  const shortTextCounts = new Map<string, number>();
  const toolTexts =
    options.toolTextCounts ??
    (options.countPiece === undefined ? toolTextCounts[boundLongRuns ? "bounded" : "whole"] : null);

  function countToolText(text: string): number {
    if (toolTexts === null || text.length > rememberedToolTextCharacters) return countText(text);
    let count = toolTexts.get(text);
    if (count === undefined) {
      count = countText(text);
      if (toolTexts.size >= rememberedToolTexts) toolTexts.clear();
      toolTexts.set(text, count);
    }
    return count;
  }

  function countLongText(text: string): number {
    if (!boundLongRuns) return countPiece(text);
    longRunPattern.lastIndex = 0;
    let match = longRunPattern.exec(text);
    // Text without a long run is counted whole, exactly as before: most text never takes the path below.
    if (match === null) return countPiece(text);
    let count = 0;
    let position = 0;
    while (match !== null) {
      if (match.index > position) count += countPiece(text.slice(position, match.index));
      count += estimateRun(match[0]);
      position = match.index + match[0].length;
      match = longRunPattern.exec(text);
    }
    if (position < text.length) count += countPiece(text.slice(position));
    return count;
  }

  /**
   * A long run in bounded work: cut into pieces, every piece counted when there are few, else evenly spaced
   * samples counted and the total extrapolated by length. The estimate stays close (the pieces of a run are
   * alike) and its cost no longer depends on the run's length.
   */
  function estimateRun(run: string): number {
    const pieces = Math.ceil(run.length / runPieceCharacters);
    if (pieces <= sampledPieces) {
      let count = 0;
      for (let index = 0; index < pieces; index++)
        count += countPiece(run.slice(index * runPieceCharacters, (index + 1) * runPieceCharacters));
      return count;
    }
    let sampledTokens = 0;
    let sampledCharacters = 0;
    for (let sample = 0; sample < sampledPieces; sample++) {
      const start = Math.floor((sample * (pieces - 1)) / (sampledPieces - 1)) * runPieceCharacters;
      const piece = run.slice(start, start + runPieceCharacters);
      sampledTokens += countPiece(piece);
      sampledCharacters += piece.length;
    }
    return Math.ceil((sampledTokens * run.length) / sampledCharacters);
  }

  function countText(text: string): number {
    if (text === "") return 0;
    if (text.length > shortTextLimit) return countLongText(text);
    let count = shortTextCounts.get(text);
    if (count === undefined) {
      count = countPiece(text);
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
          countToolText(tool.description) +
          countToolText(JSON.stringify(tool.inputSchema));
      }
      toolCounts.set(tools, count);
      return count;
    },
  };
}
