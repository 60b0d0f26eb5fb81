import type { AgentMessage, ToolInvocation } from "../contract/agent-message.js";
import type { AgentOutcome } from "../contract/agent-outcome.js";
import type { ErrorCode } from "../foundation/error-codes.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import type { AccountingEntry } from "./accounting-entry.js";
import type { FinalReport } from "./final-report.js";
import type { MessagesHash } from "./model-request-hash.js";
import type { SessionStateName } from "./transcript-sink.js";

/** The context-window counters of seed 000 §2. */
export interface ContextCounters {
  /** Tokens committed to the conversation. */
  readonly currentCtxTokens: number;
  /** Tokens pending commit: tool outputs and retry notices of the turn in progress. */
  readonly pendingCtxTokens: number;
  /** Tokens of the tool schemas offered in the last request. */
  readonly schemaCtxTokens: number;
}

export interface PlannedToolMessage {
  readonly content: string;
  readonly status: "ok" | "failed" | "dropped";
  readonly error_code: ErrorCode | null;
}

export interface SessionError {
  readonly code: ErrorCode;
  readonly message: string;
  /**
   * Structured facts of a failure before the session started, or of one thrown while it ran (a store refusing a
   * write, say): the CharterError's `details`, when it has any.
   */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Why the run must stop at the next COMMIT, decided while validating or observing. */
export type PendingViolation =
  | { readonly kind: "forbidden_tool_call"; readonly tool: string }
  | { readonly kind: "cycle_forbidden"; readonly from: string; readonly to: string }
  | { readonly kind: "malformed_exhausted"; readonly detail: string }
  | { readonly kind: "no_tools_exhausted" }
  | { readonly kind: "report_invalid_exhausted"; readonly code: ErrorCode; readonly detail: string }
  | {
      readonly kind: "attempts_exhausted";
      readonly code: ErrorCode;
      readonly detail: string;
      readonly details?: Readonly<Record<string, unknown>>;
    }
  | { readonly kind: "fatal_model_error"; readonly code: ErrorCode; readonly detail: string }
  | { readonly kind: "invalid_tool_result"; readonly detail: string };

/**
 * The whole state of a session. Transitions never mutate it: they return a new object sharing unchanged
 * parts, so a state is a value that can be checkpointed, compared and replayed.
 */
export interface SessionState {
  readonly phase: SessionStateName;
  readonly runId: string;
  readonly startedAt: number;
  /** The turn in progress (1-based); 0 before the first inference. */
  readonly turn: number;
  readonly turnStartedAt: number;
  /** Attempts made in the turn in progress (model calls, failed or not). */
  readonly attemptInTurn: number;
  readonly formatRetriesUsed: number;
  /** Consecutive rate-limit failures in this turn, for backoff. */
  readonly consecutiveRateLimits: number;
  /** Target index -> epoch ms until which it is rate-limited. */
  readonly rateLimitedUntil: ReadonlyMap<number, number>;
  readonly conversation: readonly AgentMessage[];
  /** Retry guidance for the next attempt only: never committed to the conversation (seed 000 §4). */
  readonly retryNotices: readonly AgentMessage[];
  /** The accepted assistant message of the turn in progress and the calls chosen to run. */
  readonly turnMessage: AgentMessage | null;
  readonly callsToExecute: readonly ToolInvocation[];
  readonly turnToolResults: readonly ToolExecutionResult[];
  readonly executedToolCount: number;
  readonly lastExecutedTool: string | null;
  readonly toolsUsed: readonly string[];
  readonly tokensConsumed: number;
  readonly counters: ContextCounters;
  /** Multiplier learned from the provider's reported input tokens vs. our estimate. */
  readonly tokenCalibration: number;
  readonly forcedFinalTurn: boolean;
  /** The turn whose inference offered only `final_report`, if any. */
  readonly forcedAtTurn: number | null;
  /** Tool messages decided without running a tool (dropped, forbidden, final_report), by call id. */
  readonly plannedToolMessages: ReadonlyMap<string, PlannedToolMessage>;
  /** A validated `final_report` call of the turn in progress, accepted at OBSERVE when the policy allows. */
  readonly reportCandidate: FinalReport | null;
  readonly forcedFinalReason: string | null;
  /** Set when `force_synthesis_at_ratio` (not the context guard) forced the final turn. Absent in old checkpoints. */
  readonly forcedBySynthesisRatio?: boolean;
  readonly finalReport: FinalReport | null;
  readonly violation: PendingViolation | null;
  readonly interrupted: boolean;
  /** Calls that wait for a confirmation the model cannot give (destructive tools): the run stops for them. */
  readonly pendingApprovals: readonly string[];
  /** Set while a resumed session runs its PRECHECK: where it resumes from. */
  readonly resuming: {
    readonly kind: "commit" | "before_execute";
    readonly entryCount: number;
    readonly headHash: string;
  } | null;
  /** A timeout the driver observed firing (seed 002 predicate 1). */
  readonly timedOut: "total" | "step" | null;
  readonly outcome: AgentOutcome | null;
  readonly error: SessionError | null;
  readonly accounting: readonly AccountingEntry[];
  /**
   * Derived, never persisted: the running hash of `conversation` up to `length` (model-request-hash.ts), kept so
   * that each request hashes only the messages added since the last one. Absent after a resume: the next request
   * hashes the whole conversation once.
   */
  readonly conversationHash?: MessagesHash;
}

export function initialSessionState(
  runId: string,
  now: number,
  conversation: readonly AgentMessage[],
): SessionState {
  return {
    phase: "PRECHECK",
    runId,
    startedAt: now,
    turn: 0,
    turnStartedAt: now,
    attemptInTurn: 0,
    formatRetriesUsed: 0,
    consecutiveRateLimits: 0,
    rateLimitedUntil: new Map(),
    conversation,
    retryNotices: [],
    turnMessage: null,
    callsToExecute: [],
    turnToolResults: [],
    executedToolCount: 0,
    lastExecutedTool: null,
    toolsUsed: [],
    tokensConsumed: 0,
    counters: { currentCtxTokens: 0, pendingCtxTokens: 0, schemaCtxTokens: 0 },
    tokenCalibration: 1,
    forcedFinalTurn: false,
    forcedAtTurn: null,
    plannedToolMessages: new Map(),
    reportCandidate: null,
    forcedFinalReason: null,
    finalReport: null,
    violation: null,
    interrupted: false,
    pendingApprovals: [],
    resuming: null,
    timedOut: null,
    outcome: null,
    error: null,
    accounting: [],
  };
}
