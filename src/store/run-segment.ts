import type { AccountingEntry } from "../session/accounting-entry.js";
import type { CheckpointDocument, RawPayloadInput, ToolResultInput } from "./commit-batch.js";

/**
 * The format of a run segment (the `v` of a `charter_run_segments` row). `entries` holds the transcript entries'
 * exact lines joined by "\n" (the first is entry `first_seq`). `records` holds everything else, lines joined by
 * "\n", each a one-letter tag and its record. No line holds a raw newline, because every record is JSON (which
 * escapes them) or a hash. Apart, so that a read of one never reads the bytes of the other (verification reads
 * every entry and every raw payload, a resume one checkpoint):
 *
 *   R<hash> <json>                   a raw provider payload: its canonical JSON and BLAKE3 hash
 *   A<position> <json>               an accounting entry and its 0-based position in the run
 *   T<position> <json>               a tool result (turn, callId, toolName, server, requestHash, status, errorCode,
 *                                    result) and its position
 *   C<seq> <turn> <json>             the checkpoint document, covering entry `seq`
 */
export const runSegmentVersion = 1;

export interface SegmentCheckpoint {
  readonly seq: number;
  readonly turn: number;
  readonly document: CheckpointDocument;
}

export interface SegmentToolResult {
  readonly position: number;
  readonly input: ToolResultInput;
}

/** What one transaction stores for a run, as the segment holds it. */
export interface RunSegmentRecords {
  /** Entry lines without their newline, in seq order. */
  readonly entries: readonly string[];
  readonly rawPayloads: readonly RawPayloadInput[];
  readonly accounting: readonly { readonly position: number; readonly entry: AccountingEntry }[];
  readonly toolResults: readonly SegmentToolResult[];
  readonly checkpoint: SegmentCheckpoint | null;
}

export interface EncodedRunSegment {
  readonly entries: string;
  readonly records: string;
}

export function encodeRunSegment(records: RunSegmentRecords): EncodedRunSegment {
  const lines: string[] = [];
  for (const payload of records.rawPayloads) lines.push(`R${payload.hash} ${payload.json}`);
  for (const { position, entry } of records.accounting) lines.push(`A${position} ${JSON.stringify(entry)}`);
  for (const { position, input } of records.toolResults) {
    const { turn, callId, toolName, server, requestHash, status, errorCode, result } = input;
    const stored = { turn, callId, toolName, server, requestHash, status, errorCode, result: result ?? null };
    lines.push(`T${position} ${JSON.stringify(stored)}`);
  }
  const checkpoint = records.checkpoint;
  if (checkpoint !== null) {
    lines.push(`C${checkpoint.seq} ${checkpoint.turn} ${JSON.stringify(checkpoint.document)}`);
  }
  return { entries: records.entries.join("\n"), records: lines.join("\n") };
}

/** A segment's entry lines. */
export function segmentEntryLines(entries: string): string[] {
  return entries.length === 0 ? [] : entries.split("\n");
}

export type SegmentTag = "R" | "A" | "T" | "C";

/**
 * Why a text cannot be stored as a line of a segment, or null when it can: the format has no escapes, so an
 * entry line or a raw payload must hold no newline (canonical JSON never does), an entry line must not be empty,
 * and a hash must hold no whitespace. The store refuses such a batch (`batch_invalid`) rather than store it wrong.
 */
export function unsegmentableText(
  kind: "entry line" | "raw payload" | "raw payload hash",
  text: string,
): string | null {
  if (kind === "entry line" && text.length === 0) return "an entry line is empty";
  if (kind === "raw payload hash")
    return text.length === 0 || /\s/.test(text) ? "a raw payload's hash is empty or holds whitespace" : null;
  return text.includes("\n") ? `a ${kind} holds a raw newline` : null;
}

/** The segment's records of one tag: the text after the tag, in order. */
export function segmentRecords(body: string, tag: SegmentTag): string[] {
  const records: string[] = [];
  let start = 0;
  while (start <= body.length) {
    let end = body.indexOf("\n", start);
    if (end === -1) end = body.length;
    if (end > start && body.charCodeAt(start) === tag.charCodeAt(0)) records.push(body.slice(start + 1, end));
    start = end + 1;
  }
  return records;
}

/** `<number> <rest>` of an A, T or C record: the number and what follows the first space. */
export function splitNumbered(record: string): { readonly number: number; readonly rest: string } {
  const space = record.indexOf(" ");
  return { number: Number(record.slice(0, space)), rest: record.slice(space + 1) };
}

export function decodeRawRecord(record: string): RawPayloadInput {
  const space = record.indexOf(" ");
  return { hash: record.slice(0, space), json: record.slice(space + 1) };
}

export function decodeCheckpointRecord(record: string): SegmentCheckpoint {
  const seq = splitNumbered(record);
  const turn = splitNumbered(seq.rest);
  return { seq: seq.number, turn: turn.number, document: JSON.parse(turn.rest) as CheckpointDocument };
}

export function decodeToolResultRecord(record: string): SegmentToolResult {
  const { number, rest } = splitNumbered(record);
  return { position: number, input: JSON.parse(rest) as ToolResultInput };
}
