import type { ExecutionContract } from "../contract/execution-contract.js";

/**
 * The session rules a contract was recorded under. Rules that change what a run sends or how it ends are
 * tied to the contract's schema version, so a run recorded under an older version still replays and resumes
 * exactly as it ran: version 2 keeps the old rules, version 3 (every contract built today) the new ones.
 */
export interface SessionRules {
  /** The last turn `max_inferences` allows offers only `final_report`, as a forced final turn does. */
  readonly lastTurnOffersOnlyReport: boolean;
  /**
   * A turn forced by `force_synthesis_at_ratio` that yields no report ends with the outcome seed 002's predicate
   * 4 prescribes (by the tools executed and the policy), never FAILED_BUDGET_EXHAUSTED.
   */
  readonly synthesisOutcomeByPolicy: boolean;
  /** `token_gate` under `tool_policy: required`: ask the provider for a tool call and stream no text until one ran. */
  readonly tokenGate: boolean;
  /**
   * A tool result the pipeline refused as a malformed envelope (TOOL_RESULT_INVALID: a tool that returned
   * something other than its output shape) ends the run FAILED_VALIDATION (seed 002 Phase 3).
   */
  readonly malformedToolResultFailsRun: boolean;
  /**
   * Token counts estimate long single-class runs (text without spaces) from samples instead of tokenising them
   * whole (model/token-estimator.ts), so counting costs bounded time whatever the text.
   */
  readonly boundedTokenEstimation: boolean;
}

const version2Rules: SessionRules = Object.freeze({
  lastTurnOffersOnlyReport: false,
  synthesisOutcomeByPolicy: false,
  tokenGate: false,
  malformedToolResultFailsRun: false,
  boundedTokenEstimation: false,
});

const version3Rules: SessionRules = Object.freeze({
  lastTurnOffersOnlyReport: true,
  synthesisOutcomeByPolicy: true,
  tokenGate: true,
  malformedToolResultFailsRun: true,
  boundedTokenEstimation: true,
});

export function sessionRules(contract: Pick<ExecutionContract, "schema_version">): SessionRules {
  return contract.schema_version >= 3 ? version3Rules : version2Rules;
}
