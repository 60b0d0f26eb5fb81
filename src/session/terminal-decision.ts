import type { AgentOutcome } from "../contract/agent-outcome.js";
import type { ErrorCode } from "../foundation/error-codes.js";

/** A terminal decision of COMMIT: the outcome, which predicate fired, and for failures the error. */
export interface TerminalDecision {
  readonly outcome: AgentOutcome;
  readonly predicate: string;
  readonly error: {
    readonly code: ErrorCode;
    readonly message: string;
    readonly details?: Readonly<Record<string, unknown>>;
  } | null;
  /** For synthetic reports: the machine-readable reason, e.g. `max_turns_exhausted`. */
  readonly reason: string;
}
