import { findJsonValueEnd } from "./json-value-end.js";
import type { TranscriptEntry } from "./transcript-entry.js";

/**
 * The exact text of a `transcript.jsonl` line, and its inverse. Writing and verifying share this file so
 * that the layout cannot drift between them.
 *
 * A line is `<prefix><canonical action>,"result":<canonical result><suffix>\n`: keys in the order of
 * `transcriptEntryKeys`, no whitespace, action and result as the very RFC 8785 text that was hashed.
 */
export function formatTranscriptLine(entry: TranscriptEntry, actionJson: string, resultJson: string): string {
  return `${linePrefix(entry)}${actionJson}${resultSeparator}${resultJson}${lineSuffix(entry)}\n`;
}

/** The stored texts of an entry's action and result, when `line` (no newline) has exactly the layout above. */
export interface StoredEntryTexts {
  readonly actionJson: string;
  readonly resultJson: string;
}

/**
 * Recovers the action and result texts of a line already parsed into `entry`, or null when the line is not
 * laid out exactly as `formatTranscriptLine` writes it. Because the line parsed as JSON and its prefix and
 * suffix match, the two texts found are the values the parser read for `action` and `result`; hashing them
 * checks the entry without serialising its values again.
 */
export function splitTranscriptLine(line: string, entry: TranscriptEntry): StoredEntryTexts | null {
  const prefix = linePrefix(entry);
  const suffix = lineSuffix(entry);
  if (!line.startsWith(prefix) || !line.endsWith(suffix)) return null;
  const end = line.length - suffix.length;
  const actionEnd = findJsonValueEnd(line, prefix.length);
  if (actionEnd === -1 || actionEnd > end || !line.startsWith(resultSeparator, actionEnd)) return null;
  const resultStart = actionEnd + resultSeparator.length;
  if (findJsonValueEnd(line, resultStart) !== end) return null;
  return { actionJson: line.slice(prefix.length, actionEnd), resultJson: line.slice(resultStart, end) };
}

const resultSeparator = ',"result":';

function linePrefix(entry: TranscriptEntry): string {
  return `{"v":${entry.v},"seq":${entry.seq},"step_id":${JSON.stringify(entry.step_id)},"state":${JSON.stringify(
    entry.state,
  )},"turn":${entry.turn},"timestamp":${entry.timestamp},"action":`;
}

function lineSuffix(entry: TranscriptEntry): string {
  return `,"action_hash":${JSON.stringify(entry.action_hash)},"result_hash":${JSON.stringify(
    entry.result_hash,
  )},"model_fingerprint":${
    entry.model_fingerprint === null ? "null" : JSON.stringify(entry.model_fingerprint)
  },"prev_hash":${JSON.stringify(entry.prev_hash)},"hash":${JSON.stringify(entry.hash)}}`;
}
