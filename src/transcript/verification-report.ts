/** Why verification stopped at an entry (or at the run's header, contract or raw payloads). */
export const verificationReasonCodes = [
  "CONTRACT_HASH_MISMATCH",
  "ACTION_HASH_MISMATCH",
  "RESULT_HASH_MISMATCH",
  "CHAIN_LINK_MISMATCH",
  "SEQUENCE_GAP",
  "MALFORMED_LINE",
  "RAW_PAYLOAD_MISSING",
  "RAW_PAYLOAD_HASH_MISMATCH",
  "UNSUPPORTED_VERSION",
  /** A record a run store keeps beside the chain (checkpoint, tool result, run row) that the chain does not bind. */
  "RECORD_MISMATCH",
] as const;

export type VerificationReasonCode = (typeof verificationReasonCodes)[number];

export interface VerificationFailure {
  /**
   * The entry at fault: its own `seq` when it could be read, otherwise the seq expected at that line.
   * Null when the fault is in the run rather than in an entry (header.json, contract.json, an unreferenced
   * raw payload).
   */
  readonly seq: number | null;
  readonly step_id: string | null;
  readonly reason_code: VerificationReasonCode;
  /** What was wrong and where (file, line, expected and found values), for people. */
  readonly detail: string;
  /**
   * For RECORD_MISMATCH, the stored record at fault: `checkpoint <seq>`, `tool_result <position>` or
   * `run <column>`.
   */
  readonly record?: string;
}

export interface VerificationReport {
  readonly ok: boolean;
  /** Entries verified, all of them when ok, otherwise those before the first bad one. */
  readonly entries: number;
  /** Hash of the last verified entry (the genesis hash when none), null when the header is unusable. */
  readonly head_hash: string | null;
  readonly first_bad_entry: VerificationFailure | null;
}
