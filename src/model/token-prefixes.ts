import { createRequire } from "node:module";
import { longRunCharacters, runPieceCharacters } from "./token-estimator.js";

interface O200kCodec {
  encode(text: string, options: { disallowedSpecial: Set<string> }): number[];
  decode(tokens: readonly number[]): string;
}
let loadedCodec: O200kCodec | undefined;

// The same module, loaded the same lazy way, as the token estimator: nothing pays for the tables until text is cut.
function codec(): O200kCodec {
  loadedCodec ??= createRequire(import.meta.url)("gpt-tokenizer/encoding/o200k_base") as O200kCodec;
  return loadedCodec;
}

// Special-token spellings ("<|endoftext|>") are ordinary text here, as in the estimator.
const encodeOptions = { disallowedSpecial: new Set<string>() };

/** No o200k_base token is anywhere near this many characters long: a window this wide holds `count` tokens. */
const charactersPerTokenBound = 128;

const longRunPattern = new RegExp(
  `[\\p{L}\\p{M}]{${longRunCharacters},}|[^\\s\\p{L}\\p{N}]{${longRunCharacters},}|\\s{${longRunCharacters},}`,
  "gu",
);

/** The text's first tokens, cut into prefixes at token boundaries. */
export interface TokenPrefixes {
  /** How many tokens are available (at most the `maxTokens` asked for). */
  readonly count: number;
  /** The text of the first `tokens` tokens: always a prefix of the text, never half a character. */
  prefix(tokens: number): string;
}

/**
 * Tokenises the start of `text` in the o200k_base encoding (the context guard's), far enough for `maxTokens`
 * tokens, so that it can be cut at a token boundary. Long single-class runs are tokenised in pieces, as the
 * estimator counts them, so the work stays bounded per character whatever the text.
 */
export function tokenPrefixes(text: string, maxTokens: number): TokenPrefixes {
  const window = text.slice(0, Math.max(0, maxTokens) * charactersPerTokenBound);
  const { encode, decode } = codec();
  const tokens: number[] = [];
  for (const piece of pieces(window)) {
    if (tokens.length >= maxTokens) break;
    for (const token of encode(piece, encodeOptions)) tokens.push(token);
  }
  const count = Math.min(tokens.length, Math.max(0, maxTokens));
  return {
    count,
    prefix(wanted) {
      const taken = Math.max(0, Math.min(count, Math.floor(wanted)));
      let cut = decode(tokens.slice(0, taken));
      // A token can end inside a character (one byte of several): what decodes to a replacement character is dropped.
      while (cut !== "" && !text.startsWith(cut)) cut = cut.slice(0, -1);
      return cut;
    },
  };
}

/** The window cut where the estimator cuts it: long single-class runs into fixed pieces, the rest whole. */
function* pieces(text: string): Generator<string> {
  longRunPattern.lastIndex = 0;
  let position = 0;
  for (let match = longRunPattern.exec(text); match !== null; match = longRunPattern.exec(text)) {
    if (match.index > position) yield text.slice(position, match.index);
    for (let start = 0; start < match[0].length; start += runPieceCharacters)
      yield match[0].slice(start, start + runPieceCharacters);
    position = match.index + match[0].length;
  }
  if (position < text.length) yield text.slice(position);
}
