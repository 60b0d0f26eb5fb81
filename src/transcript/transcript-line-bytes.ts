import { transcriptFormatVersion } from "./transcript-entry.js";

/**
 * Where the members of one `transcript.jsonl` line lie in its UTF-8 bytes, as [start, end) offsets. Filled in
 * place by `parseTranscriptLineBytes`, so that reading a line allocates nothing.
 */
export interface TranscriptLineSpans {
  seq: number;
  seqStart: number;
  seqEnd: number;
  stepIdStart: number;
  stepIdEnd: number;
  stateStart: number;
  stateEnd: number;
  turnStart: number;
  turnEnd: number;
  timestampStart: number;
  timestampEnd: number;
  actionStart: number;
  actionEnd: number;
  resultStart: number;
  resultEnd: number;
  /** Each hash is the 64 bytes from its start. */
  actionHashStart: number;
  resultHashStart: number;
  modelFingerprintStart: number;
  modelFingerprintEnd: number;
  prevHashStart: number;
  hashStart: number;
  /**
   * Whether the line holds `"raw_re` (the start of a `raw_request_hash` or `raw_response_hash` key) anywhere:
   * the test `checkLine` makes before it looks for raw payload references. Found while the line is scanned, at
   * every quote the scan meets, which are all the quotes a line it accepts can hold outside its fixed keys.
   */
  rawReferenceMarker: boolean;
}

export function createTranscriptLineSpans(): TranscriptLineSpans {
  return {
    seq: 0,
    seqStart: 0,
    seqEnd: 0,
    stepIdStart: 0,
    stepIdEnd: 0,
    stateStart: 0,
    stateEnd: 0,
    turnStart: 0,
    turnEnd: 0,
    timestampStart: 0,
    timestampEnd: 0,
    actionStart: 0,
    actionEnd: 0,
    resultStart: 0,
    resultEnd: 0,
    actionHashStart: 0,
    resultHashStart: 0,
    modelFingerprintStart: 0,
    modelFingerprintEnd: 0,
    prevHashStart: 0,
    hashStart: 0,
    rawReferenceMarker: false,
  };
}

export const hashLength = 64;

const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);
const opening = ascii(`{"v":${transcriptFormatVersion},"seq":`);
const stepIdKey = ascii(',"step_id":');
const stateKey = ascii(',"state":');
const turnKey = ascii(',"turn":');
const timestampKey = ascii(',"timestamp":');
const actionKey = ascii(',"action":');
const resultKey = ascii(',"result":');
const actionHashKey = ascii(',"action_hash":"');
const resultHashKey = ascii('","result_hash":"');
const modelFingerprintKey = ascii('","model_fingerprint":');
const nullText = ascii("null");
const prevHashKey = ascii(',"prev_hash":"');
const hashKey = ascii('","hash":"');
const closing = ascii('"}');

const quote = 0x22;
const backslash = 0x5c;
const comma = 0x2c;
const minus = 0x2d;
const zero = 0x30;
const nine = 0x39;
const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;

const utf8 = new TextDecoder("utf-8");
const rawReferenceMarker = ascii("raw_re");
// Set by the scans when a quote they meet is followed by `raw_re`; the parse is synchronous, so one flag serves.
let markerSeen = false;

/** Notes whether the quote at `index` starts `"raw_re`. */
function noteQuote(bytes: Uint8Array, index: number, end: number): void {
  if (
    bytes[index + 1] === rawReferenceMarker[0] &&
    expect(bytes, index + 1, end, rawReferenceMarker) !== -1
  ) {
    markerSeen = true;
  }
}

/**
 * `parseTranscriptLine` over the UTF-8 bytes of a line starting at `start`, which must be valid UTF-8: the end of
 * the line's text (the offset after its closing brace) or -1, with the members' byte spans in `spans`. The
 * caller checks that the line ends there (a newline follows, or the stored line's length). It reads no further
 * than `limit`, and none of the members it accepts holds a control character (so no newline either).
 *
 * It accepts a line only when `parseTranscriptLine` accepts the decoded line with the same members, because every
 * byte it looks for is ASCII, and in valid UTF-8 an ASCII byte is always that character, never part of another.
 * It is stricter on one count: an action or result holding a raw control character, which canonical JSON never
 * does, is refused here (the caller's slower path then decides). Hashes are taken as they stand, as there.
 */
export function parseTranscriptLineBytes(
  bytes: Uint8Array,
  start: number,
  limit: number,
  spans: TranscriptLineSpans,
): number {
  const end = limit;
  markerSeen = false;
  let position = expect(bytes, start, end, opening);
  if (position === -1) return -1;
  spans.seqStart = position;
  position = readNumber(bytes, position, end);
  if (position === -1 || bytes[spans.seqStart] === minus) return -1;
  spans.seqEnd = position;
  position = expect(bytes, position, end, stepIdKey);
  if (position === -1) return -1;
  spans.stepIdStart = position;
  position = readString(bytes, position, end);
  if (position === -1) return -1;
  spans.stepIdEnd = position;
  position = expect(bytes, position, end, stateKey);
  if (position === -1) return -1;
  spans.stateStart = position;
  position = readString(bytes, position, end);
  if (position === -1) return -1;
  spans.stateEnd = position;
  position = expect(bytes, position, end, turnKey);
  if (position === -1) return -1;
  spans.turnStart = position;
  position = readNumber(bytes, position, end);
  if (position === -1) return -1;
  spans.turnEnd = position;
  position = expect(bytes, position, end, timestampKey);
  if (position === -1) return -1;
  spans.timestampStart = position;
  position = readNumber(bytes, position, end);
  if (position === -1) return -1;
  spans.timestampEnd = position;
  position = expect(bytes, position, end, actionKey);
  if (position === -1) return -1;
  spans.actionStart = position;
  position = findValueEnd(bytes, position, end);
  if (position === -1) return -1;
  spans.actionEnd = position;
  position = expect(bytes, position, end, resultKey);
  if (position === -1) return -1;
  spans.resultStart = position;
  position = findValueEnd(bytes, position, end);
  if (position === -1) return -1;
  spans.resultEnd = position;
  position = expect(bytes, position, end, actionHashKey);
  if (position === -1 || position + hashLength > end) return -1;
  spans.actionHashStart = position;
  position = expect(bytes, position + hashLength, end, resultHashKey);
  if (position === -1 || position + hashLength > end) return -1;
  spans.resultHashStart = position;
  position = expect(bytes, position + hashLength, end, modelFingerprintKey);
  if (position === -1) return -1;
  spans.modelFingerprintStart = position;
  const afterNull = expect(bytes, position, end, nullText);
  position = afterNull !== -1 ? afterNull : readString(bytes, position, end);
  if (position === -1) return -1;
  spans.modelFingerprintEnd = position;
  position = expect(bytes, position, end, prevHashKey);
  if (position === -1 || position + hashLength > end) return -1;
  spans.prevHashStart = position;
  position = expect(bytes, position + hashLength, end, hashKey);
  if (position === -1 || position + hashLength > end) return -1;
  spans.hashStart = position;
  position = expect(bytes, position + hashLength, end, closing);
  if (position === -1) return -1;
  const seq = numberAt(bytes, spans.seqStart, spans.seqEnd);
  if (!Number.isSafeInteger(seq)) return -1;
  spans.seq = seq;
  spans.rawReferenceMarker = markerSeen;
  return position;
}

/** The offset after `text` when bytes at `position` spell it, else -1. */
function expect(bytes: Uint8Array, position: number, end: number, text: Uint8Array): number {
  if (position + text.length > end) return -1;
  for (let index = 0; index < text.length; index++) {
    if (bytes[position + index] !== text[index]) return -1;
  }
  return position + text.length;
}

/**
 * The end of a number spelled as the writer spells it (ECMAScript's shortest form), which runs up to the next
 * comma; -1 otherwise. As `readNumber` in transcript-line.ts.
 */
function readNumber(bytes: Uint8Array, position: number, end: number): number {
  let numberEnd = position;
  while (numberEnd < end && bytes[numberEnd] !== comma) numberEnd++;
  if (numberEnd === end || numberEnd === position) return -1;
  if (!isCanonicalInteger(bytes, position, numberEnd)) {
    const text = utf8.decode(bytes.subarray(position, numberEnd));
    const value = Number(text);
    if (!Number.isFinite(value) || String(value) !== text) return -1;
  }
  return numberEnd;
}

/** As `isCanonicalInteger` in transcript-line.ts: at most 15 digits, no leading zero (or "0"), an exact double. */
function isCanonicalInteger(bytes: Uint8Array, start: number, end: number): boolean {
  let index = bytes[start] === minus ? start + 1 : start;
  const digits = end - index;
  if (digits < 1 || digits > 15) return false;
  if (bytes[index] === zero) return digits === 1 && index === start;
  for (; index < end; index++) {
    const code = bytes[index] as number;
    if (code < zero || code > nine) return false;
  }
  return true;
}

/** The value of a number the parse accepted. */
function numberAt(bytes: Uint8Array, start: number, end: number): number {
  if (!isCanonicalInteger(bytes, start, end)) return Number(utf8.decode(bytes.subarray(start, end)));
  let value = 0;
  for (let index = start; index < end; index++) value = value * 10 + ((bytes[index] as number) - zero);
  return value;
}

/**
 * The end of a string (quotes included) spelled as JSON.stringify spells it, else -1. As `readString` in
 * transcript-line.ts; the bytes being valid UTF-8, they hold no lone surrogate, which leaves raw control
 * characters as the only fault of a string without escapes.
 */
function readString(bytes: Uint8Array, position: number, end: number): number {
  if (bytes[position] !== quote) return -1;
  noteQuote(bytes, position, end);
  let escaped = false;
  for (let index = position + 1; index < end; index++) {
    const code = bytes[index] as number;
    if (code === quote) {
      noteQuote(bytes, index, end);
      if (!escaped) return index + 1;
      // Escapes have several spellings; the canonical one is what JSON.stringify gives back.
      const quoted = utf8.decode(bytes.subarray(position, index + 1));
      let value: unknown;
      try {
        value = JSON.parse(quoted);
      } catch {
        return -1;
      }
      return JSON.stringify(value) === quoted ? index + 1 : -1;
    }
    if (code === backslash) {
      escaped = true;
      index++; // the escaped character cannot close the string
      if (bytes[index] === quote) noteQuote(bytes, index, end);
    } else if (code < 0x20) {
      return -1;
    }
  }
  return -1;
}

/**
 * The end of the JSON value that starts at `start`, or -1: the boundaries `findJsonValueEnd` finds in the
 * decoded text (brackets and strings are all it tracks; the value's hash decides whether it is the text written).
 */
function findValueEnd(bytes: Uint8Array, start: number, end: number): number {
  const first = bytes[start];
  if (first === quote) return findStringEnd(bytes, start, end);
  if (first !== openBrace && first !== openBracket) {
    let index = start;
    while (index < end) {
      const code = bytes[index] as number;
      if (code === comma || code === closeBrace || code === closeBracket) break;
      if (code < 0x20) return -1;
      if (code === quote) noteQuote(bytes, index, end);
      index++;
    }
    return index === start ? -1 : index;
  }
  let depth = 0;
  for (let index = start; index < end; index++) {
    const code = bytes[index] as number;
    // Outside strings a canonical text holds only brackets, commas, colons, digits and letters.
    if (code > closeBracket && code !== openBrace && code !== closeBrace) continue;
    if (code < 0x20) return -1;
    if (code === quote) {
      const stringEnd = findStringEnd(bytes, index, end);
      if (stringEnd === -1) return -1;
      index = stringEnd - 1;
    } else if (code === openBrace || code === openBracket) {
      depth++;
    } else if (code === closeBrace || code === closeBracket) {
      depth--;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}

/**
 * The end of the string whose opening quote is at `start` (the first quote after it not escaped), or -1, also
 * for a string holding a control character (escaped or not).
 */
function findStringEnd(bytes: Uint8Array, start: number, end: number): number {
  noteQuote(bytes, start, end);
  for (let index = start + 1; index < end; index++) {
    const code = bytes[index] as number;
    // Most bytes are neither a quote, a backslash nor a control character: one test lets them by.
    if (code > quote && code !== backslash) continue;
    if (code === quote) {
      noteQuote(bytes, index, end);
      return index + 1;
    }
    if (code === backslash) {
      index++;
      const escapedCode = bytes[index] as number;
      if (escapedCode === quote) noteQuote(bytes, index, end);
      else if (escapedCode < 0x20) return -1;
    } else if (code < 0x20) {
      return -1;
    }
  }
  return -1;
}
