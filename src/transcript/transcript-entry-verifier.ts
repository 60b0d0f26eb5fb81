import { canonicalJson } from "../foundation/canonical-json.js";
import { blake3Hex } from "../foundation/content-hash.js";
import { createChainLinkPreimage, type EncodedChainLink, encodeChainLink } from "./chain-link-hash.js";
import { runDirectoryLayout } from "./run-directory-layout.js";
import { type TranscriptEntry, type TranscriptHeader, transcriptFormatVersion } from "./transcript-entry.js";
import { findTranscriptEntryShapeProblem } from "./transcript-entry-shape.js";
import { parseTranscriptLine } from "./transcript-line.js";
import type { VerificationFailure, VerificationReasonCode } from "./verification-report.js";

/** Raw payloads of a run by content hash: true when the stored bytes hash to their name. */
export type RawPayloadIndex = ReadonlyMap<string, boolean>;

/** The lines of a transcript, from the first, known to pass verification in order. */
export interface VerifiedPrefix {
  /** Lines verified: also the seq the next entry must carry. */
  readonly lines: number;
  /** The last verified line's hash, the genesis hash before the first. */
  readonly headHash: string;
}

export interface TranscriptEntryVerifier {
  /** Entries verified so far. */
  readonly verified: number;
  /** Hash of the last verified entry, the genesis hash before the first. */
  readonly headHash: string;
  /** The seq the next entry must carry. */
  readonly expectedSeq: number;
  /**
   * Checks the next line of `transcript.jsonl` (without its newline) and advances on success. The check is
   * byte-exact: the line must be laid out exactly as the writer writes it and its action and result texts
   * must hash to the recorded hashes, so no byte can change unnoticed, not even one that leaves the parsed
   * values equal. `lineNumber` (1-based) names the line in failure details.
   */
  checkLine(line: string, lineNumber: number): VerificationFailure | null;
  /** Checks the next entry held in memory, by its values (canonicalised and hashed), and advances on success. */
  checkEntry(entry: unknown): VerificationFailure | null;
}

interface Problem {
  readonly reason: VerificationReasonCode;
  readonly detail: string;
}

const rawReferenceKeys: ReadonlySet<string> = new Set(["raw_request_hash", "raw_response_hash"]);

/**
 * Verifies entries one at a time, in order. A line costs a layout parse (no JSON.parse, no re-serialising),
 * one hash each of its stored action and result texts and one of its link; only a line that fails is
 * parsed as JSON, to name its fault precisely. The header must already be checked (its genesis hash is
 * trusted here). `verifiedPrefix` starts it after lines already verified (by `checkTranscriptLineBlock`), as if
 * it had checked them itself.
 */
export function createTranscriptEntryVerifier(
  header: TranscriptHeader,
  rawIndex: RawPayloadIndex,
  verifiedPrefix: VerifiedPrefix = { lines: 0, headHash: header.genesis_hash },
): TranscriptEntryVerifier {
  const linkPreimage = createChainLinkPreimage({
    contractHash: header.contract_hash,
    adapterVersion: header.adapter_version,
    modelProfileId: header.model_profile_id,
  });
  let headHash = verifiedPrefix.headHash;
  let verified = verifiedPrefix.lines;

  function failure(seq: number, stepId: string | null, problem: Problem): VerificationFailure {
    return { seq, step_id: stepId, reason_code: problem.reason, detail: problem.detail };
  }

  function advance(hash: string): null {
    headHash = hash;
    verified++;
    return null;
  }

  function linkProblem(link: EncodedChainLink, hash: string, location: string): Problem | null {
    if (link.prev !== headHash) {
      return {
        reason: "CHAIN_LINK_MISMATCH",
        detail: `${location}: prev_hash is ${link.prev} but the previous link is ${headHash}`,
      };
    }
    const computed = blake3Hex(linkPreimage(link));
    return computed === hash
      ? null
      : { reason: "CHAIN_LINK_MISMATCH", detail: mismatch(location, "link", hash, computed) };
  }

  /** The first fault of an entry held as values, without advancing. */
  function evaluate(value: unknown, location: string): VerificationFailure | null {
    const expectedSeq = verified;
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return failure(expectedSeq, null, malformed(location, "the entry is not a JSON object"));
    }
    const record = value as Record<string, unknown>;
    const stepId = typeof record.step_id === "string" ? record.step_id : null;
    if (record.v !== transcriptFormatVersion) {
      return failure(
        expectedSeq,
        stepId,
        typeof record.v === "number"
          ? {
              reason: "UNSUPPORTED_VERSION",
              detail: `${location}: format version ${record.v} is not supported`,
            }
          : malformed(location, "the entry has no format version v"),
      );
    }
    const shapeProblem = findTranscriptEntryShapeProblem(record);
    if (shapeProblem !== null) return failure(expectedSeq, stepId, malformed(location, shapeProblem));
    const entry = record as unknown as TranscriptEntry;
    if (entry.seq !== expectedSeq) {
      return failure(entry.seq, entry.step_id, {
        reason: "SEQUENCE_GAP",
        detail: `${location}: expected seq ${expectedSeq}, found ${entry.seq}`,
      });
    }
    const actionHash = hashOf(entry.action);
    if (actionHash !== entry.action_hash) {
      return failure(entry.seq, entry.step_id, {
        reason: "ACTION_HASH_MISMATCH",
        detail: mismatch(location, "action", entry.action_hash, actionHash),
      });
    }
    const resultHash = hashOf(entry.result);
    if (resultHash !== entry.result_hash) {
      return failure(entry.seq, entry.step_id, {
        reason: "RESULT_HASH_MISMATCH",
        detail: mismatch(location, "result", entry.result_hash, resultHash),
      });
    }
    const problem =
      linkProblem(
        encodeChainLink({
          prev: entry.prev_hash,
          state: entry.state,
          action_hash: entry.action_hash,
          result_hash: entry.result_hash,
          model_fingerprint: entry.model_fingerprint,
          seq: entry.seq,
          step_id: entry.step_id,
          turn: entry.turn,
          timestamp: entry.timestamp,
        }),
        entry.hash,
        location,
      ) ??
      findRawProblem(entry.action, rawIndex, location) ??
      findRawProblem(entry.result, rawIndex, location);
    return problem === null ? null : failure(entry.seq, entry.step_id, problem);
  }

  return {
    get verified() {
      return verified;
    },
    get headHash() {
      return headHash;
    },
    get expectedSeq() {
      return verified;
    },

    checkLine(line, lineNumber) {
      const parsed = parseTranscriptLine(line);
      if (
        parsed !== null &&
        parsed.seq === verified &&
        parsed.link.prev === headHash &&
        blake3Hex(parsed.actionJson) === parsed.link.action_hash &&
        blake3Hex(parsed.resultJson) === parsed.link.result_hash &&
        blake3Hex(linkPreimage(parsed.link)) === parsed.hash
      ) {
        // Raw references are rare: the key names in the text are a cheap test before parsing the values.
        // The texts are canonical JSON here (they hash to their records), which never escapes a key's letters.
        if (!line.includes('"raw_re')) return advance(parsed.hash);
        const problem = findRawProblemInTexts(
          parsed.actionJson,
          parsed.resultJson,
          rawIndex,
          lineLocation(lineNumber),
        );
        return problem === null
          ? advance(parsed.hash)
          : failure(parsed.seq, JSON.parse(parsed.link.step_id), problem);
      }
      // The line is faulty: its values say precisely how.
      const location = lineLocation(lineNumber);
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        return failure(verified, null, malformed(location, "the line is not valid JSON"));
      }
      const fault = evaluate(value, location);
      if (fault !== null) return fault;
      // The values are sound but the text is not the text written (an escape or a number spelled another way,
      // keys reordered, whitespace added): bytes were changed.
      const entry = value as TranscriptEntry;
      return failure(
        entry.seq,
        entry.step_id,
        malformed(location, "the line is not in the layout it was written in"),
      );
    },

    checkEntry(entry) {
      const fault = evaluate(entry, `entry ${verified}`);
      return fault ?? advance((entry as TranscriptEntry).hash);
    },
  };
}

function lineLocation(lineNumber: number): string {
  return `${runDirectoryLayout.transcript} line ${lineNumber}`;
}

function findRawProblemInTexts(
  actionJson: string,
  resultJson: string,
  rawIndex: RawPayloadIndex,
  location: string,
): Problem | null {
  let action: unknown;
  let result: unknown;
  try {
    action = JSON.parse(actionJson);
    result = JSON.parse(resultJson);
  } catch {
    // Texts that hash to their records are what the writer wrote, which always parses; these were forged.
    return malformed(location, "the action or result is not valid JSON");
  }
  return findRawProblem(action, rawIndex, location) ?? findRawProblem(result, rawIndex, location);
}

function malformed(location: string, problem: string): Problem {
  return { reason: "MALFORMED_LINE", detail: `${location}: ${problem}` };
}

function hashOf(value: unknown): string | null {
  try {
    return blake3Hex(canonicalJson(value));
  } catch {
    // Only a value JSON cannot hold (a number too large to be finite) gets here; it matches no hash.
    return null;
  }
}

function mismatch(location: string, field: string, recorded: string, computed: string | null): string {
  return `${location}: the recorded ${field} hash is ${recorded} but the ${field} hashes to ${
    computed ?? "nothing (it is not canonical JSON)"
  }`;
}

/** Every `raw_request_hash`/`raw_response_hash` string, at any depth, must name an intact raw payload. */
function findRawProblem(value: unknown, rawIndex: RawPayloadIndex, location: string): Problem | null {
  if (value === null || typeof value !== "object") return null;
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = findRawProblem(item, rawIndex, location);
      if (problem !== null) return problem;
    }
    return null;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const member = record[key];
    if (rawReferenceKeys.has(key) && typeof member === "string") {
      const intact = rawIndex.get(member);
      if (intact === undefined) {
        return {
          reason: "RAW_PAYLOAD_MISSING",
          detail: `${location}: ${key} ${member} names no file in raw/`,
        };
      }
      if (!intact) {
        return {
          reason: "RAW_PAYLOAD_HASH_MISMATCH",
          detail: `${location}: raw/${member}.json does not hash to its name, or names a request part that is missing or damaged`,
        };
      }
    } else {
      const problem = findRawProblem(member, rawIndex, location);
      if (problem !== null) return problem;
    }
  }
  return null;
}
