import type { TranscriptStateName } from "../session/transcript-sink.js";

/** The version every persisted transcript record carries as `v`; readers reject any other. */
export const transcriptFormatVersion = 1;

/** `header.json`: what the chain is bound to. Written once, when the transcript is created. */
export interface TranscriptHeader {
  readonly v: typeof transcriptFormatVersion;
  readonly run_id: string;
  readonly contract_hash: string;
  readonly adapter_version: string;
  readonly model_profile_id: string;
  /** H(-1), the hash the first entry links to: `contentHash({ genesis: contract_hash, run_id })`. */
  readonly genesis_hash: string;
  /** ISO 8601. */
  readonly created_at: string;
}

/**
 * The header fields every reader requires as strings (all but `v`): one list for reading a run directory and for
 * verifying it, so that the two never disagree about what a whole header is.
 */
export const transcriptHeaderStringFields = [
  "run_id",
  "contract_hash",
  "adapter_version",
  "model_profile_id",
  "genesis_hash",
  "created_at",
] as const satisfies readonly (keyof TranscriptHeader)[];

/** One line of `transcript.jsonl`: one state transition, after redaction, with its hashes. */
export interface TranscriptEntry {
  readonly v: typeof transcriptFormatVersion;
  /** 0-based position in the chain. */
  readonly seq: number;
  readonly step_id: string;
  readonly state: TranscriptStateName;
  readonly turn: number;
  /** Milliseconds since the epoch. */
  readonly timestamp: number;
  readonly action: unknown;
  readonly result: unknown;
  /** `contentHash(action)`. */
  readonly action_hash: string;
  /** `contentHash(result)`. */
  readonly result_hash: string;
  readonly model_fingerprint: string | null;
  /** The previous entry's `hash`, or the header's `genesis_hash` for seq 0. */
  readonly prev_hash: string;
  /** This link of the chain; see chain-link-hash.ts for the exact preimage. */
  readonly hash: string;
}

/** The keys of a transcript entry, in the order they are written. */
export const transcriptEntryKeys = [
  "v",
  "seq",
  "step_id",
  "state",
  "turn",
  "timestamp",
  "action",
  "result",
  "action_hash",
  "result_hash",
  "model_fingerprint",
  "prev_hash",
  "hash",
] as const satisfies readonly (keyof TranscriptEntry)[];
