import { isUtf8 } from "node:buffer";
import { blake3Hex } from "../foundation/content-hash.js";
import type { ChainBinding } from "./chain-link-hash.js";
import { type ChainLinkMember, createChainLinkPreimageTemplate } from "./chain-link-preimage-bytes.js";
import {
  createTranscriptLineSpans,
  hashLength,
  parseTranscriptLineBytes,
  type TranscriptLineSpans,
} from "./transcript-line-bytes.js";

/**
 * What `checkTranscriptLineBlock` found: the lines that passed, from the first, and what joins them to the
 * lines before the block. A block is checked without knowing what precedes it, so the seq and prev_hash of its
 * first line and the raw payload references are left to the caller.
 */
export interface LineBlockResult {
  /** Lines that passed, from the block's first. */
  readonly passed: number;
  /** Byte offset in the block of the first line that did not pass; null when every complete line passed. */
  readonly stoppedAt: number | null;
  /** Byte offset after the last passed line: the block's length unless it stopped or ends in a line cut off. */
  readonly consumed: number;
  /** The first line's seq (meaningful when passed > 0); each next line's is one more. */
  readonly firstSeq: number;
  /** The first line's prev_hash as stored (meaningful when passed > 0). */
  readonly firstPrevHash: string;
  /** The last passed line's hash. */
  readonly lastHash: string;
  /**
   * The raw payloads the passed lines reference (every `raw_request_hash`/`raw_response_hash` string, at any
   * depth), in order, with the index in the block of the line that references each: two flat arrays, which
   * cost less to hand from one thread to another than an object per line.
   */
  readonly rawReferenceHashes: readonly string[];
  readonly rawReferenceLines: readonly number[];
}

/** Lines are separated by newlines (a `transcript.jsonl` range), or end where `lineEnds` says (stored lines). */
export interface LineBlock {
  readonly bytes: Uint8Array;
  /** The end offset of each line; null for newline-terminated lines (text after the last newline is ignored). */
  readonly lineEnds: Int32Array | null;
}

const newline = 0x0a;
const rawReferenceKeys: ReadonlySet<string> = new Set(["raw_request_hash", "raw_response_hash"]);

/**
 * Checks a block of consecutive transcript lines exactly as the entry verifier's `checkLine` checks each one,
 * minus what needs the lines before the block and the run's raw payloads: its layout, its action and result
 * against their hashes, its link, and within the block the seq and prev_hash continuity. It stops at the first
 * line that does not pass, which the caller hands to `checkLine` to name the fault (or to pass it: a line this
 * refuses is never one `checkLine` would accept, and the reverse holds too, but the caller need not rely on it).
 *
 * It works on the bytes as stored: the action and result are hashed where they lie and the link's preimage is
 * assembled from byte spans, so no line is decoded, split off or parsed as JSON (except the action and result of
 * lines that reference raw payloads, to find the references).
 */
export function checkTranscriptLineBlock(block: LineBlock, binding: ChainBinding): LineBlockResult {
  const { bytes, lineEnds } = block;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const template = createChainLinkPreimageTemplate(binding);
  const memberCodes = template.members.map(memberCode);
  const spans = createTranscriptLineSpans();
  const memberStarts = new Int32Array(memberCount);
  const memberEnds = new Int32Array(memberCount);
  let preimage = new Uint8Array(1024);
  const allValid = isUtf8(bytes);
  const rawReferenceHashes: string[] = [];
  const rawReferenceLines: number[] = [];

  let passed = 0;
  let firstSeq = -1;
  let firstPrevHash = "";
  let lastHash = "";
  let previousHashStart = -1;
  let lineStart = 0;
  for (;;) {
    let lineEnd: number;
    if (lineEnds === null) {
      // The parse finds the line's end itself (it never reads past a newline), which saves a search per line.
      if (lineStart === bytes.length) break;
      lineEnd = parseTranscriptLineBytes(bytes, lineStart, bytes.length, spans);
      if (lineEnd === -1 || bytes[lineEnd] !== newline) {
        // Text after the last newline is a line cut off mid-write: not this check's to judge.
        if (buffer.indexOf(newline, lineStart) === -1) break;
        return stop();
      }
    } else {
      if (passed === lineEnds.length) break;
      lineEnd = lineEnds[passed] as number;
      if (parseTranscriptLineBytes(bytes, lineStart, lineEnd, spans) !== lineEnd) return stop();
    }
    if (!allValid && !isUtf8(bytes.subarray(lineStart, lineEnd))) return stop();
    if (passed === 0) {
      firstSeq = spans.seq;
      firstPrevHash = buffer.toString("latin1", spans.prevHashStart, spans.prevHashStart + hashLength);
    } else if (
      spans.seq !== firstSeq + passed ||
      !sameBytes(bytes, spans.prevHashStart, previousHashStart, hashLength)
    ) {
      return stop();
    }
    if (
      !equalsText(
        bytes,
        spans.actionHashStart,
        blake3Hex(bytes.subarray(spans.actionStart, spans.actionEnd)),
      ) ||
      !equalsText(bytes, spans.resultHashStart, blake3Hex(bytes.subarray(spans.resultStart, spans.resultEnd)))
    ) {
      return stop();
    }
    fillMemberSpans(spans, memberStarts, memberEnds);
    let length = 0;
    for (let index = 0; index < memberCodes.length; index++) {
      const code = memberCodes[index] as number;
      length +=
        (template.segments[index] as Uint8Array).length +
        (memberEnds[code] as number) -
        (memberStarts[code] as number);
    }
    length += (template.segments[memberCodes.length] as Uint8Array).length;
    if (preimage.length < length) preimage = new Uint8Array(length * 2);
    let position = 0;
    for (let index = 0; index < memberCodes.length; index++) {
      const segment = template.segments[index] as Uint8Array;
      preimage.set(segment, position);
      position += segment.length;
      const code = memberCodes[index] as number;
      position = copyBytes(
        bytes,
        memberStarts[code] as number,
        memberEnds[code] as number,
        preimage,
        position,
      );
    }
    preimage.set(template.segments[memberCodes.length] as Uint8Array, position);
    const hash = blake3Hex(preimage.subarray(0, length));
    if (!equalsText(bytes, spans.hashStart, hash)) return stop();
    if (spans.rawReferenceMarker) {
      // Raw references are rare: the key names in the text are a cheap test before parsing the values, as in
      // checkLine. Texts that are not JSON are checkLine's to report.
      const hashes: string[] = [];
      try {
        collectRawReferences(JSON.parse(buffer.toString("utf8", spans.actionStart, spans.actionEnd)), hashes);
        collectRawReferences(JSON.parse(buffer.toString("utf8", spans.resultStart, spans.resultEnd)), hashes);
      } catch {
        return stop();
      }
      for (const hash of hashes) {
        rawReferenceHashes.push(hash);
        rawReferenceLines.push(passed);
      }
    }
    previousHashStart = spans.hashStart;
    lastHash = hash;
    passed++;
    lineStart = lineEnds === null ? lineEnd + 1 : lineEnd;
  }
  return {
    passed,
    stoppedAt: null,
    consumed: lineStart,
    firstSeq,
    firstPrevHash,
    lastHash,
    rawReferenceHashes,
    rawReferenceLines,
  };

  function stop(): LineBlockResult {
    return {
      passed,
      stoppedAt: lineStart,
      consumed: lineStart,
      firstSeq,
      firstPrevHash,
      lastHash,
      rawReferenceHashes,
      rawReferenceLines,
    };
  }
}

const memberCount = 9;
const memberCodeByName: Record<ChainLinkMember, number> = {
  prev: 0,
  state: 1,
  action_hash: 2,
  result_hash: 3,
  model_fingerprint: 4,
  seq: 5,
  step_id: 6,
  turn: 7,
  timestamp: 8,
};

function memberCode(member: ChainLinkMember): number {
  return memberCodeByName[member];
}

/** Each member's span in the line, by member code: the very texts the preimage spells. */
function fillMemberSpans(spans: TranscriptLineSpans, starts: Int32Array, ends: Int32Array): void {
  starts[0] = spans.prevHashStart;
  ends[0] = spans.prevHashStart + hashLength;
  starts[1] = spans.stateStart;
  ends[1] = spans.stateEnd;
  starts[2] = spans.actionHashStart;
  ends[2] = spans.actionHashStart + hashLength;
  starts[3] = spans.resultHashStart;
  ends[3] = spans.resultHashStart + hashLength;
  starts[4] = spans.modelFingerprintStart;
  ends[4] = spans.modelFingerprintEnd;
  starts[5] = spans.seqStart;
  ends[5] = spans.seqEnd;
  starts[6] = spans.stepIdStart;
  ends[6] = spans.stepIdEnd;
  starts[7] = spans.turnStart;
  ends[7] = spans.turnEnd;
  starts[8] = spans.timestampStart;
  ends[8] = spans.timestampEnd;
}

/** Copies source[start, end) to target at `position` (short spans: a loop costs less than a subarray); returns the end. */
function copyBytes(
  source: Uint8Array,
  start: number,
  end: number,
  target: Uint8Array,
  position: number,
): number {
  let to = position;
  for (let index = start; index < end; index++) target[to++] = source[index] as number;
  return to;
}

/** Whether bytes at `offset` spell `text`, an ASCII text (a hex hash). */
function equalsText(bytes: Uint8Array, offset: number, text: string): boolean {
  if (offset + text.length > bytes.length) return false;
  for (let index = 0; index < text.length; index++) {
    if (bytes[offset + index] !== text.charCodeAt(index)) return false;
  }
  return true;
}

function sameBytes(bytes: Uint8Array, first: number, second: number, length: number): boolean {
  for (let index = 0; index < length; index++) {
    if (bytes[first + index] !== bytes[second + index]) return false;
  }
  return true;
}

/** Every `raw_request_hash`/`raw_response_hash` string at any depth: the pairs checkLine's raw check visits. */
function collectRawReferences(value: unknown, hashes: string[]): void {
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const item of value) collectRawReferences(item, hashes);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const member = record[key];
    if (rawReferenceKeys.has(key) && typeof member === "string") hashes.push(member);
    else collectRawReferences(member, hashes);
  }
}
