import { transcriptEntryKeys } from "./transcript-entry.js";

const entryKeyCount = transcriptEntryKeys.length;

/**
 * Checks that a parsed entry has exactly the keys of a transcript entry with the right types (the values'
 * hashes are checked elsewhere). Returns what is wrong, or null. `v` is checked by the caller, which tells
 * an unsupported version from a malformed entry.
 */
export function findTranscriptEntryShapeProblem(entry: Record<string, unknown>): string | null {
  let keyCount = 0;
  for (const key in entry) if (Object.hasOwn(entry, key)) keyCount++;
  if (keyCount !== entryKeyCount) {
    const unexpected = Object.keys(entry).filter(
      (key) => !(transcriptEntryKeys as readonly string[]).includes(key),
    );
    const missing = transcriptEntryKeys.filter((key) => !Object.hasOwn(entry, key));
    return `the entry has unexpected keys [${unexpected.join(", ")}] or lacks [${missing.join(", ")}]`;
  }
  if (!Number.isSafeInteger(entry.seq)) return "seq is not an integer";
  if (typeof entry.step_id !== "string") return "step_id is not a string";
  if (typeof entry.state !== "string") return "state is not a string";
  if (!Number.isFinite(entry.turn)) return "turn is not a finite number";
  if (!Number.isFinite(entry.timestamp)) return "timestamp is not a finite number";
  if (!Object.hasOwn(entry, "action") || !Object.hasOwn(entry, "result"))
    return "the entry lacks action or result";
  if (typeof entry.action_hash !== "string") return "action_hash is not a string";
  if (typeof entry.result_hash !== "string") return "result_hash is not a string";
  if (entry.model_fingerprint !== null && typeof entry.model_fingerprint !== "string") {
    return "model_fingerprint is neither a string nor null";
  }
  if (typeof entry.prev_hash !== "string") return "prev_hash is not a string";
  if (typeof entry.hash !== "string") return "hash is not a string";
  return null;
}
