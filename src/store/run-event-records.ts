import type { RunOwner } from "./run-record.js";

/**
 * The lifecycle of a run a server executes (seed 004): REQUESTED -> ROUTED -> EXECUTING -> (TOOL_CALL ...) ->
 * COMPLETED | FAILED. AWAITING_APPROVAL is a stop on the way (a delete-class call waits for a human's decision);
 * the run goes on with EXECUTING once it is given.
 */
export const runEventTypes = [
  "REQUESTED",
  "ROUTED",
  "EXECUTING",
  "TOOL_CALL",
  "AWAITING_APPROVAL",
  "COMPLETED",
  "FAILED",
] as const;
export type RunEventType = (typeof runEventTypes)[number];

/** The events after which a run's lifecycle is over. */
export const settledRunEventTypes: readonly RunEventType[] = ["COMPLETED", "FAILED"];

/** Who and what an event is about, as every event of a run carries it (the seed's correlation fields). */
export interface RunEventIdentity {
  /** The seed's task_id. */
  readonly runId: string;
  readonly requestId: string;
  readonly userId: string | null;
  readonly correlationId: string;
  readonly conversationId: string | null;
}

/** An event to append: its number is the store's to give. */
export interface NewRunEvent extends RunEventIdentity {
  readonly type: RunEventType;
  /** What the event says (JSON-serialisable, already redacted). */
  readonly data: Readonly<Record<string, unknown>>;
  /** Default the store's clock. */
  readonly createdAt?: number;
}

export interface StoredRunEvent extends NewRunEvent {
  readonly tenantId: string | null;
  /** 1, 2, 3... per run, without gaps: what a reader resumes after (`Last-Event-ID`). */
  readonly sequence: number;
  readonly createdAt: number;
}

/** A run as a server accepted it: the request (JSON), and where its lifecycle stands. */
export interface RunRequestRecord {
  readonly runId: string;
  readonly tenantId: string | null;
  readonly conversationId: string | null;
  readonly request: unknown;
  /** The type of the run's latest lifecycle event. */
  readonly state: RunEventType;
  readonly lastSequence: number;
  readonly cancelRequestedAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** What `createRunRequest` stores: the request and its REQUESTED event, in one transaction. */
export interface NewRunRequest {
  readonly event: RunEventIdentity & { readonly data: Readonly<Record<string, unknown>> };
  readonly request: unknown;
  readonly createdAt?: number;
}

/**
 * A run whose lifecycle is not over, as the upkeep that continues abandoned runs sees it (every tenant's): its
 * request's state and cancellation, and its run row's status and owner when it has one.
 */
export interface UnsettledRunRequest {
  readonly runId: string;
  readonly tenantId: string | null;
  readonly state: RunEventType;
  readonly cancelRequestedAt: number | null;
  readonly createdAt: number;
  /** Null while the run has no run row (queued, or its process died before it stored it). */
  readonly run: {
    readonly status: string;
    readonly owner: RunOwner | null;
    readonly heartbeatAt: number | null;
  } | null;
}
