import type { AccountingEntry } from "../session/accounting-entry.js";
import type { TranscriptEntry } from "../transcript/transcript-entry.js";
import type { RunTotals, StoppedRunStatus } from "./run-record.js";

/** A transcript entry and the exact line the transcript module wrote for it (with or without its newline). */
export interface StoredEntryInput {
  readonly entry: TranscriptEntry;
  readonly line: string;
}

/** A raw provider payload: `json` is its canonical JSON and `hash` = BLAKE3(json), as the transcript made them. */
export interface RawPayloadInput {
  readonly hash: string;
  readonly json: string;
}

/**
 * What resuming needs (seed 003 INV-CP-001), as an opaque, versioned JSON document. The store keeps it as
 * given and hands it back; its content is the session's business.
 */
export interface CheckpointDocument {
  readonly v: number;
  readonly [member: string]: unknown;
}

export interface CheckpointInput {
  /** The seq of the COMMIT entry the checkpoint covers; that entry must be in the same batch. */
  readonly seq: number;
  readonly document: CheckpointDocument;
}

/** One tool call's result, kept for replay and inspection. */
export interface ToolResultInput {
  readonly turn: number;
  readonly callId: string;
  readonly toolName: string;
  /** The MCP server (null for function and built-in tools). */
  readonly server: string | null;
  /** `toolRequestHash` of the call's tool identity and arguments: what replay looks results up by. */
  readonly requestHash: string;
  readonly status: string;
  readonly errorCode: string | null;
  /** The result as JSON (the tool execution result, say). */
  readonly result: unknown;
}

/** An oversized tool output stored behind a handle (seed 000 §3): where it is and how big. */
export interface ToolOutputInput {
  readonly handle: string;
  readonly toolName: string;
  readonly callId: string;
  readonly bytes: number;
  readonly lines: number;
  readonly path: string;
}

/**
 * Everything one COMMIT makes durable, written in ONE transaction: the transcript entries since the previous
 * batch (in seq order, continuing the stored chain), the raw payloads they reference, the checkpoint covering
 * them, the accounting entries and tool results of the turn, and the run's totals. Either all of it is stored
 * or none of it.
 */
export interface CommitBatch {
  readonly runId: string;
  readonly entries?: readonly StoredEntryInput[];
  readonly rawPayloads?: readonly RawPayloadInput[];
  readonly checkpoint?: CheckpointInput | null;
  /** Appended after those already stored; the store numbers them. */
  readonly accounting?: readonly AccountingEntry[];
  /** Appended after those already stored; the store numbers them. */
  readonly toolResults?: readonly ToolResultInput[];
  readonly toolOutputs?: readonly ToolOutputInput[];
  /** The run's totals so far (replacing the stored ones). */
  readonly totals?: RunTotals;
}

/** The last batch of a run (its TERMINATE entry, say) and how the run stopped, in one transaction. */
export interface RunFinish extends CommitBatch {
  readonly status: StoppedRunStatus;
  readonly outcome: string | null;
  readonly errorCode?: string | null;
  readonly statusReason?: string | null;
  readonly finalReport?: unknown;
  /** Defaults to the store's clock. */
  readonly finishedAt?: number;
}

/** The stored run's chain after a batch. */
export interface CommitReceipt {
  readonly entryCount: number;
  readonly headHash: string;
}
