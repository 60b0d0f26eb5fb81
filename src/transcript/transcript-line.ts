import type { EncodedChainLink } from "./chain-link-hash.js";
import { findJsonValueEnd } from "./json-value-end.js";
import { transcriptFormatVersion } from "./transcript-entry.js";

/**
 * The exact text of a `transcript.jsonl` line, and its inverse. Writing and verifying share this file so
 * that the layout cannot drift between them.
 *
 * A line is, without whitespace, with keys in this order and the action and result as the very RFC 8785
 * text that was hashed:
 *
 *   {"v":1,"seq":N,"step_id":S,"state":S,"turn":N,"timestamp":N,"action":A,"result":R,
 *    "action_hash":"H","result_hash":"H","model_fingerprint":S|null,"prev_hash":"H","hash":"H"}
 *
 * Every member but the action and result is spelled as in the chain link's preimage, so both are written
 * from the same encoded texts.
 */
export function formatTranscriptLine(
  link: EncodedChainLink,
  actionJson: string,
  resultJson: string,
  hash: string,
): string {
  return `{"v":${transcriptFormatVersion},"seq":${link.seq},"step_id":${link.step_id},"state":${link.state},"turn":${link.turn},"timestamp":${link.timestamp},"action":${actionJson},"result":${resultJson},"action_hash":"${link.action_hash}","result_hash":"${link.result_hash}","model_fingerprint":${link.model_fingerprint},"prev_hash":"${link.prev}","hash":"${hash}"}\n`;
}

/** A line read back: its link members as spelled, the action and result texts, and its hash. */
export interface ParsedTranscriptLine {
  readonly seq: number;
  readonly link: EncodedChainLink;
  readonly actionJson: string;
  readonly resultJson: string;
  readonly hash: string;
}

/**
 * Reads a line (without its newline) laid out exactly as `formatTranscriptLine` writes it, every number and
 * string spelled as the writer spells it; null for any other text. This is no general JSON parser: it accepts
 * one layout, leaves the members as the texts the link hash covers and the action and result as the texts
 * their hashes cover, and so costs less than JSON.parse. A line it accepts has one possible byte sequence.
 * Hashes are taken as they stand; comparing them with recomputed ones is the caller's check.
 */
export function parseTranscriptLine(line: string): ParsedTranscriptLine | null {
  const cursor: Cursor = { line, position: 0 };
  if (!expect(cursor, '{"v":1,"seq":')) return null;
  const seqText = readNumber(cursor);
  if (seqText === null || seqText.charCodeAt(0) === minus || !expect(cursor, ',"step_id":')) return null;
  const stepId = readString(cursor);
  if (stepId === null || !expect(cursor, ',"state":')) return null;
  const state = readString(cursor);
  if (state === null || !expect(cursor, ',"turn":')) return null;
  const turn = readNumber(cursor);
  if (turn === null || !expect(cursor, ',"timestamp":')) return null;
  const timestamp = readNumber(cursor);
  if (timestamp === null || !expect(cursor, ',"action":')) return null;
  const actionJson = readValueText(cursor);
  if (actionJson === null || !expect(cursor, ',"result":')) return null;
  const resultJson = readValueText(cursor);
  if (resultJson === null || !expect(cursor, ',"action_hash":"')) return null;
  const actionHash = readHash(cursor);
  if (actionHash === null || !expect(cursor, '","result_hash":"')) return null;
  const resultHash = readHash(cursor);
  if (resultHash === null || !expect(cursor, '","model_fingerprint":')) return null;
  const modelFingerprint = expect(cursor, "null") ? "null" : readString(cursor);
  if (modelFingerprint === null || !expect(cursor, ',"prev_hash":"')) return null;
  const prevHash = readHash(cursor);
  if (prevHash === null || !expect(cursor, '","hash":"')) return null;
  const hash = readHash(cursor);
  if (hash === null || !expect(cursor, '"}') || cursor.position !== line.length) return null;
  const seq = Number(seqText);
  if (!Number.isSafeInteger(seq)) return null;
  return {
    seq,
    link: {
      prev: prevHash,
      state,
      action_hash: actionHash,
      result_hash: resultHash,
      model_fingerprint: modelFingerprint,
      seq: seqText,
      step_id: stepId,
      turn,
      timestamp,
    },
    actionJson,
    resultJson,
    hash,
  };
}

interface Cursor {
  readonly line: string;
  position: number;
}

const hashLength = 64;
const backslash = 0x5c;
const quote = 0x22;
const minus = 0x2d;
const zero = 0x30;
const nine = 0x39;

function expect(cursor: Cursor, text: string): boolean {
  if (!cursor.line.startsWith(text, cursor.position)) return false;
  cursor.position += text.length;
  return true;
}

/** The text of a number spelled as the writer spells it (ECMAScript's shortest form), up to the next comma. */
function readNumber(cursor: Cursor): string | null {
  const { line, position } = cursor;
  const end = line.indexOf(",", position);
  if (end === -1 || end === position) return null;
  const text = line.slice(position, end);
  if (!isCanonicalInteger(line, position, end)) {
    const value = Number(text);
    if (!Number.isFinite(value) || String(value) !== text) return null;
  }
  cursor.position = end;
  return text;
}

/**
 * Whether line[start, end) is an integer of at most 15 digits without a leading zero (or "0"): such an
 * integer is an exact double that prints exactly so, hence canonical as it stands, no conversion needed.
 */
function isCanonicalInteger(line: string, start: number, end: number): boolean {
  let index = line.charCodeAt(start) === minus ? start + 1 : start;
  const digits = end - index;
  if (digits < 1 || digits > 15) return false;
  if (line.charCodeAt(index) === zero) return digits === 1 && index === start;
  for (; index < end; index++) {
    const code = line.charCodeAt(index);
    if (code < zero || code > nine) return false;
  }
  return true;
}

/** The text of a string, quotes included, spelled as JSON.stringify spells it. */
function readString(cursor: Cursor): string | null {
  const { line, position } = cursor;
  if (line.charCodeAt(position) !== quote) return null;
  let closing = position;
  let escaped = false;
  for (;;) {
    closing = line.indexOf('"', closing + 1);
    if (closing === -1) return null;
    // The closing quote is the first one not escaped: not preceded by an odd run of backslashes.
    let backslashes = 0;
    for (let index = closing - 1; index > position && line.charCodeAt(index) === backslash; index--)
      backslashes++;
    if (backslashes % 2 === 0) break;
    escaped = true;
  }
  const quoted = line.slice(position, closing + 1);
  if (escaped || quoted.includes("\\")) {
    // Escapes have several spellings; the canonical one is what JSON.stringify gives back.
    let value: unknown;
    try {
      value = JSON.parse(quoted);
    } catch {
      return null;
    }
    if (JSON.stringify(value) !== quoted) return null;
  } else {
    // Without escapes, canonical means no raw control character and no lone surrogate, which JSON.stringify
    // would escape. Surrogates are rare enough to leave to JSON.stringify itself.
    let surrogates = false;
    for (let index = position + 1; index < closing; index++) {
      const code = line.charCodeAt(index);
      if (code < 0x20) return null;
      if (code >= 0xd800 && code <= 0xdfff) surrogates = true;
    }
    if (surrogates && JSON.stringify(quoted.slice(1, -1)) !== quoted) return null;
  }
  cursor.position = closing + 1;
  return quoted;
}

function readValueText(cursor: Cursor): string | null {
  const end = findJsonValueEnd(cursor.line, cursor.position);
  if (end === -1) return null;
  const text = cursor.line.slice(cursor.position, end);
  cursor.position = end;
  return text;
}

function readHash(cursor: Cursor): string | null {
  const end = cursor.position + hashLength;
  if (end > cursor.line.length) return null;
  const text = cursor.line.slice(cursor.position, end);
  cursor.position = end;
  return text;
}
