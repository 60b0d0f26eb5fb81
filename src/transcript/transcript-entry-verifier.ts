import { canonicalJson } from "../foundation/canonical-json.js";
import { blake3Hex } from "../foundation/content-hash.js";
import { blake3DigestMatches } from "./blake3-digest-matches.js";
import { createChainLinkPreimage } from "./chain-link-hash.js";
import { type TranscriptEntry, type TranscriptHeader, transcriptFormatVersion } from "./transcript-entry.js";
import { findTranscriptEntryShapeProblem } from "./transcript-entry-shape.js";
import { splitTranscriptLine } from "./transcript-line.js";
import type { VerificationFailure, VerificationReasonCode } from "./verification-report.js";

/** Raw payloads of a run by content hash: true when the stored bytes hash to their name. */
export type RawPayloadIndex = ReadonlyMap<string, boolean>;

export interface TranscriptEntryVerifier {
  /** Entries verified so far. */
  readonly verified: number;
  /** Hash of the last verified entry, the genesis hash before the first. */
  readonly headHash: string;
  /** The seq the next entry must carry. */
  readonly expectedSeq: number;
  /**
   * Checks the next entry against the chain so far and advances on success. `location` names it in failure
   * details (for example `transcript.jsonl line 7`).
   *
   * With `line` (the entry's text, already parsed into `entry`), the check is byte-exact: the line must be
   * laid out exactly as the writer writes it and its action and result texts must hash to the recorded
   * hashes, so that no byte can change unnoticed, not even one that leaves the parsed values equal. Without
   * it (entries held in memory) the values are canonicalised and hashed.
   *
   * `mayReferenceRaw` false skips the search for raw payload references when the caller knows there are
   * none (the line lacks the key names).
   */
  check(
    entry: unknown,
    location: string,
    mayReferenceRaw: boolean,
    line?: string,
  ): VerificationFailure | null;
}

const rawReferenceKeys: ReadonlySet<string> = new Set(["raw_request_hash", "raw_response_hash"]);

/**
 * Verifies entries one at a time, in order, with the least work per entry: for a line, one hash each of the
 * stored action and result texts and one of the link, compared as bytes. The header must already be
 * checked (its genesis hash is trusted here).
 */
export function createTranscriptEntryVerifier(
  header: TranscriptHeader,
  rawIndex: RawPayloadIndex,
): TranscriptEntryVerifier {
  const linkPreimage = createChainLinkPreimage({
    contractHash: header.contract_hash,
    adapterVersion: header.adapter_version,
    modelProfileId: header.model_profile_id,
  });
  let headHash = header.genesis_hash;
  let verified = 0;

  function fail(
    seq: number,
    stepId: string | null,
    reasonCode: VerificationReasonCode,
    detail: string,
  ): VerificationFailure {
    return { seq, step_id: stepId, reason_code: reasonCode, detail };
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

    check(value, location, mayReferenceRaw, line) {
      const expectedSeq = verified;
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return fail(expectedSeq, null, "MALFORMED_LINE", `${location}: the entry is not a JSON object`);
      }
      const record = value as Record<string, unknown>;
      const stepId = typeof record.step_id === "string" ? record.step_id : null;
      if (record.v !== transcriptFormatVersion) {
        return typeof record.v === "number"
          ? fail(
              expectedSeq,
              stepId,
              "UNSUPPORTED_VERSION",
              `${location}: format version ${record.v} is not supported`,
            )
          : fail(expectedSeq, stepId, "MALFORMED_LINE", `${location}: the entry has no format version v`);
      }
      const shapeProblem = findTranscriptEntryShapeProblem(record);
      if (shapeProblem !== null)
        return fail(expectedSeq, stepId, "MALFORMED_LINE", `${location}: ${shapeProblem}`);
      const entry = record as unknown as TranscriptEntry;
      const seq = entry.seq;
      if (seq !== expectedSeq) {
        return fail(
          seq,
          entry.step_id,
          "SEQUENCE_GAP",
          `${location}: expected seq ${expectedSeq}, found ${seq}`,
        );
      }

      const stored = line === undefined ? null : splitTranscriptLine(line, entry);
      const valueProblem = checkValueHashes(entry, stored, location, line !== undefined);
      if (valueProblem !== null) return fail(seq, entry.step_id, valueProblem.reason, valueProblem.detail);

      if (entry.prev_hash !== headHash) {
        return fail(
          seq,
          entry.step_id,
          "CHAIN_LINK_MISMATCH",
          `${location}: prev_hash is ${entry.prev_hash} but the previous link is ${headHash}`,
        );
      }
      const preimage = linkPreimage({
        prev: headHash,
        state: entry.state,
        action_hash: entry.action_hash,
        result_hash: entry.result_hash,
        model_fingerprint: entry.model_fingerprint,
        seq,
        step_id: entry.step_id,
        turn: entry.turn,
        timestamp: entry.timestamp,
      });
      if (!blake3DigestMatches(preimage, entry.hash)) {
        return fail(
          seq,
          entry.step_id,
          "CHAIN_LINK_MISMATCH",
          mismatch(location, "link", entry.hash, blake3Hex(preimage)),
        );
      }
      if (mayReferenceRaw) {
        const rawProblem = findRawProblem(entry.action, rawIndex) ?? findRawProblem(entry.result, rawIndex);
        if (rawProblem !== null)
          return fail(seq, entry.step_id, rawProblem.reason, `${location}: ${rawProblem.detail}`);
      }
      headHash = entry.hash;
      verified = expectedSeq + 1;
      return null;
    },
  };
}

interface Problem {
  readonly reason: VerificationReasonCode;
  readonly detail: string;
}

/**
 * The fast path hashes the stored texts. Anything else (no line, a line not laid out as written, a text
 * that does not hash to its record) is settled on the values, which also names the precise fault.
 */
function checkValueHashes(
  entry: TranscriptEntry,
  stored: { readonly actionJson: string; readonly resultJson: string } | null,
  location: string,
  byteExact: boolean,
): Problem | null {
  if (
    stored !== null &&
    blake3DigestMatches(stored.actionJson, entry.action_hash) &&
    blake3DigestMatches(stored.resultJson, entry.result_hash)
  ) {
    return null;
  }
  const actionHash = hashOf(entry.action);
  if (actionHash !== entry.action_hash) {
    return {
      reason: "ACTION_HASH_MISMATCH",
      detail: mismatch(location, "action", entry.action_hash, actionHash),
    };
  }
  const resultHash = hashOf(entry.result);
  if (resultHash !== entry.result_hash) {
    return {
      reason: "RESULT_HASH_MISMATCH",
      detail: mismatch(location, "result", entry.result_hash, resultHash),
    };
  }
  if (byteExact) {
    // The values hash correctly but the text differs from what the writer writes (an escape or an
    // exponent spelled differently, a reordered key...): the bytes were changed.
    return {
      reason: "MALFORMED_LINE",
      detail: `${location}: the line is not in the canonical layout it was written in`,
    };
  }
  return null;
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
function findRawProblem(value: unknown, rawIndex: RawPayloadIndex): Problem | null {
  if (value === null || typeof value !== "object") return null;
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = findRawProblem(item, rawIndex);
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
        return { reason: "RAW_PAYLOAD_MISSING", detail: `${key} ${member} names no file in raw/` };
      }
      if (!intact) {
        return {
          reason: "RAW_PAYLOAD_HASH_MISMATCH",
          detail: `raw/${member}.json does not hash to its name`,
        };
      }
    } else {
      const problem = findRawProblem(member, rawIndex);
      if (problem !== null) return problem;
    }
  }
  return null;
}
