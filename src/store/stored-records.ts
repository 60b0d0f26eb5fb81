import type { CheckpointDocument, ToolOutputInput, ToolResultInput } from "./commit-batch.js";

export interface CheckpointRecord {
  readonly runId: string;
  /** The seq of the COMMIT entry it covers: resuming starts after it (seed 003 INV-CP-002). */
  readonly seq: number;
  readonly turn: number;
  readonly createdAt: number;
  readonly document: CheckpointDocument;
}

/** A transcript entry as stored: its position, state and step, and its exact line (without the newline). */
export interface StoredEntryLine {
  readonly seq: number;
  readonly stepId: string;
  readonly state: string;
  readonly turn: number;
  readonly hash: string;
  readonly line: string;
}

/** A stored line's text, with the seq it is stored under. */
export type StoredEntryLineText = Pick<StoredEntryLine, "seq" | "line">;

export interface StoredRawPayload {
  readonly hash: string;
  readonly json: string;
}

export interface ToolResultRecord extends ToolResultInput {
  readonly runId: string;
  /** 0-based, in the order the results were committed. */
  readonly position: number;
  readonly createdAt: number;
}

export interface ToolOutputRecord extends ToolOutputInput {
  readonly runId: string;
  readonly createdAt: number;
}

/** A cached result of a read-only tool. */
export interface ToolCacheEntry {
  /** `toolRequestHash` of the tool identity and arguments. */
  readonly key: string;
  readonly server: string | null;
  readonly tool: string;
  readonly value: unknown;
  readonly createdAt: number;
  /** The entry is a hit while `now < expiresAt`. */
  readonly expiresAt: number;
  /** The tenant it was stored for (null: none), and the narrower scope within it (a role, a user), if any. */
  readonly tenantId: string | null;
  readonly scope: string | null;
}

export interface ToolCachePut {
  readonly key: string;
  readonly server: string | null;
  readonly tool: string;
  readonly value: unknown;
  readonly expiresAt: number;
  /** Defaults to the store's clock. */
  readonly createdAt?: number;
  /**
   * The tenant the entry is for, and a narrower scope within it (a role, a user): recorded so that
   * `cachePurgeTenant` can remove them. They do not make the key: the caller's key must bind them already
   * (`toolCacheKey` does).
   */
  readonly tenantId?: string | null;
  readonly scope?: string | null;
}

export interface RunStoreStatistics {
  readonly runs: number;
  readonly entries: number;
  /**
   * Raw payloads: in the tables of schema 1 each distinct payload once, whatever the number of runs referencing it;
   * in segments (schema 2) one per segment that stored it.
   */
  readonly rawPayloads: number;
  readonly rawPayloadBytes: number;
  readonly checkpoints: number;
  readonly cacheEntries: number;
}
