import type { AgentMessage } from "../contract/agent-message.js";
import type { AgentOutcome } from "../contract/agent-outcome.js";
import type { AccountingEntry } from "./accounting-entry.js";
import type { FinalReport } from "./final-report.js";
import type { PendingApproval } from "./pending-approval.js";
import type { SessionError } from "./session-state.js";

/**
 * The result of every run, whatever happened (seed 000 §4 "Always Return Output"). `success` is true
 * exactly when the outcome is a COMPLETED_* outcome; `error` carries a stable code for every failure.
 */
export interface AIAgentResult {
  readonly success: boolean;
  readonly outcome: AgentOutcome;
  readonly finalReport: FinalReport | null;
  readonly error: SessionError | null;
  readonly conversation: readonly AgentMessage[];
  readonly accounting: readonly AccountingEntry[];
  readonly runId: string;
  readonly contractId: string | null;
  readonly contractHash: string | null;
  readonly turns: number;
  readonly toolsUsed: readonly string[];
  readonly tokens: { readonly input: number; readonly output: number };
  /** The run's cost in USD over every priced model call (sub-agents and extractions included); null if none. */
  readonly costUsd: number | null;
  readonly transcript: {
    readonly entries: number;
    readonly headHash: string | null;
    readonly directory: string | null;
  };
  /**
   * Set by the runner when the run stopped for approvals (`APPROVAL_REQUIRED`): each pending call with its tool
   * and redacted arguments, so that the user does not approve blind.
   */
  readonly pendingApprovals?: readonly PendingApproval[];
}
