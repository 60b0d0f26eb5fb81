/**
 * The session appends one entry per state transition (seed 002 Invariant E) to a sink it does not own.
 * The `transcript` module implements the sink (hash chain, JSONL file, raw payload store); the session
 * only knows this interface, so it stays free of file systems and databases.
 */
export type SessionStateName =
  | "PRECHECK"
  | "INFER"
  | "VALIDATE_CALLS"
  | "EXECUTE"
  | "OBSERVE"
  | "COMMIT"
  | "TERMINATE"
  /**
   * Not a state of the session: written by the durable layer, between the session's entries, to bind what a run
   * store keeps beside the chain (checkpoints, tool results) by their content hashes. See bound-records.ts.
   */
  | "RECORD";

/**
 * Not states of a session: the entries of a workflow run's own transcript (src/workflow), chained by the same
 * machinery. A workflow's checkpoint covers its WORKFLOW_CHECKPOINT entry, as a session's covers a COMMIT.
 */
export type WorkflowTranscriptState =
  | "WORKFLOW_START"
  | "WORKFLOW_RESUME"
  | "WORKFLOW_STEP_START"
  | "WORKFLOW_STEP_END"
  | "WORKFLOW_CHECKPOINT"
  | "WORKFLOW_COMPENSATION_START"
  | "WORKFLOW_COMPENSATION_END"
  | "WORKFLOW_END";

/** Every state a transcript entry may record. */
export type TranscriptStateName = SessionStateName | WorkflowTranscriptState;

export interface TranscriptEntryInput {
  readonly state: TranscriptStateName;
  /** Stable id of the step within the run, for example `turn-3/infer`. */
  readonly step_id: string;
  readonly turn: number;
  readonly timestamp: number;
  /** What the runtime did in this state (its request, decision, the calls it validated...). */
  readonly action: unknown;
  /** What came of it (the canonical message, tool results, the outcome...). */
  readonly result: unknown;
  /** `provider/model` of the target that answered, for INFER entries. */
  readonly model_fingerprint: string | null;
}

export interface TranscriptSink {
  /** Redacts secrets, hashes and appends the entry; returns the new chain head. */
  append(entry: TranscriptEntryInput): string;
  /** Stores a raw payload (a provider request or response) by content hash, after redaction; returns the hash. */
  storeRaw(payload: unknown): string;
  /**
   * Stores a provider request body by parts (each element of its top-level arrays once per run, the request as a
   * composite naming them), so a turn stores only what is new in the conversation; returns the composite's hash.
   */
  storeRawRequest(body: unknown): string;
  readonly entryCount: number;
  readonly headHash: string;
  /** Waits until everything appended so far is durable. */
  flush(): Promise<void>;
}
