import type { TranscriptHeader } from "../transcript/transcript-entry.js";

/** Where a run stands. Only a `running` run accepts entries; `reopenRun` makes a stopped run `running` again. */
export const runStatuses = ["running", "completed", "failed", "interrupted", "awaiting_approval"] as const;
export type RunStatus = (typeof runStatuses)[number];
/** The statuses a run can be finished with. */
export type StoppedRunStatus = Exclude<RunStatus, "running">;

/** What a run is: one agent session, or a workflow whose steps are runs of their own (their parent). */
export const runKinds = ["agent", "workflow"] as const;
export type RunKind = (typeof runKinds)[number];

/** What a run consumed so far; the writer passes the session's counters at each COMMIT and at the end. */
export interface RunTotals {
  readonly turns: number;
  readonly tokensIn: number;
  readonly tokensOut: number;
  readonly costUsd: number;
  /** Names of the tools executed, in first-use order. */
  readonly toolsUsed: readonly string[];
}

/** Who runs a running run: the process (its id, host and start time, which tells it from a later process with its id). */
export interface RunOwner {
  readonly pid: number;
  readonly host: string;
  /** When the process started, in milliseconds since the epoch. */
  readonly startedAt: number;
}

/** A run as `listRuns` returns it: everything but the contract and the transcript header. */
export interface RunSummary {
  /** The format version of the stored record. */
  readonly v: number;
  readonly runId: string;
  /** `agent` for a session, `workflow` for a workflow run (its agentId is the workflow's id). */
  readonly kind: RunKind;
  readonly contractId: string;
  readonly contractHash: string;
  readonly agentId: string;
  readonly status: RunStatus;
  /** Why the run stopped where the outcome alone does not say (`approval_required`, say). */
  readonly statusReason: string | null;
  /** The session's outcome (`COMPLETED_WITH_TOOLS`, `INTERRUPTED`...), null while running. */
  readonly outcome: string | null;
  readonly errorCode: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly finishedAt: number | null;
  readonly tenantId: string | null;
  readonly correlationId: string | null;
  readonly parentRunId: string | null;
  readonly totals: RunTotals;
  readonly finalReport: unknown;
  /** The hash of the last stored entry (the genesis hash before the first). */
  readonly headHash: string;
  readonly entryCount: number;
  readonly accountingCount: number;
  readonly toolResultCount: number;
  /** The process that created or last reopened the run (null: none recorded, as before schema 4). */
  readonly owner: RunOwner | null;
  /** When that process last said it was alive (its heartbeat), null when it never did. */
  readonly heartbeatAt: number | null;
}

/** A run with its contract and transcript header, as `getRun` returns it. */
export interface RunRecord extends RunSummary {
  /** The run's execution contract as it was stored (plain JSON; validate it before running under it). */
  readonly contract: unknown;
  readonly header: TranscriptHeader;
}

/** What `createRun` needs: the transcript header, the contract it is bound to, and who the run is for. */
export interface NewRun {
  readonly header: TranscriptHeader;
  /** The run's execution contract (its instance: `contract_id` and `contract_hash` are read from it). */
  readonly contract: { readonly contract_id: string; readonly contract_hash: string };
  readonly agentId: string;
  /** Default `agent`. */
  readonly kind?: RunKind;
  /** The store's tenant, when given (default); another is refused. */
  readonly tenantId?: string | null;
  readonly correlationId?: string | null;
  readonly parentRunId?: string | null;
  /** The process that runs it; its heartbeat starts at the run's creation. */
  readonly owner?: RunOwner | null;
  /** Defaults to the store's clock. */
  readonly createdAt?: number;
}

/** A filter for `listRuns`; runs come newest first. */
export interface RunQuery {
  /** Default 50, at most 1000. */
  readonly limit?: number;
  readonly offset?: number;
  readonly status?: RunStatus;
  /** The store lists its own tenant's runs only: another tenant here selects none. */
  readonly tenantId?: string | null;
  readonly agentId?: string;
  readonly kind?: RunKind;
}

export const emptyRunTotals: RunTotals = Object.freeze({
  turns: 0,
  tokensIn: 0,
  tokensOut: 0,
  costUsd: 0,
  toolsUsed: Object.freeze([]) as readonly string[],
});
