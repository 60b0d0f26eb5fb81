import type { AgentMessage } from "../contract/agent-message.js";
import type { AgentOutcome } from "../contract/agent-outcome.js";
import type { ErrorCode } from "../foundation/error-codes.js";
import { exceedsSynthesisRatio } from "./context-guard.js";
import { prepareInference } from "./prepare-inference.js";
import type { SessionContext } from "./session-context.js";
import type { SessionState } from "./session-state.js";
import type { TerminalDecision } from "./terminal-decision.js";
import { terminateSession } from "./terminate-session.js";
import type { EntryCollector, TransitionOutput } from "./transition-output.js";

/**
 * COMMIT: appends the turn to the conversation, updates the counters and evaluates the transition
 * predicates in exactly seed 002's order. "Exceeded" is read strictly: a budget predicate fires only when
 * another inference would be needed beyond the budget, so a report on exactly the last turn succeeds.
 */
export function commitTurn(
  state: SessionState,
  now: number,
  context: SessionContext,
  collector: EntryCollector,
  toolMessages: readonly AgentMessage[],
): TransitionOutput {
  const conversation = state.turnMessage
    ? [...state.conversation, state.turnMessage, ...toolMessages]
    : state.conversation;
  const committed: SessionState = {
    ...state,
    phase: "COMMIT",
    conversation,
    turnMessage: null,
    callsToExecute: [],
    plannedToolMessages: new Map(),
    counters: {
      currentCtxTokens:
        state.counters.currentCtxTokens + (state.turnMessage ? state.counters.pendingCtxTokens : 0),
      pendingCtxTokens: 0,
      schemaCtxTokens: state.counters.schemaCtxTokens,
    },
  };
  const decision = decide(committed, now, context);
  collector.add(
    committed,
    "COMMIT",
    now,
    { counters: committed.counters, tokens_consumed: committed.tokensConsumed, turn: committed.turn },
    decision === null
      ? { forced_final_turn: committed.forcedFinalTurn, next: "INFER" }
      : { next: "TERMINATE", outcome: decision.outcome, predicate: decision.predicate },
  );
  if (decision !== null) return terminateSession(committed, now, context, collector, decision);

  // Predicate 4 (seed 002): past `force_synthesis_at_ratio` the next turn is a forced final turn.
  const forceSynthesis =
    !committed.forcedFinalTurn &&
    exceedsSynthesisRatio(context.contract, committed.counters, committed.tokenCalibration);
  const nextTurn: SessionState = {
    ...committed,
    forcedFinalTurn: committed.forcedFinalTurn || forceSynthesis,
    forcedFinalReason: forceSynthesis
      ? "The context passed force_synthesis_at_ratio."
      : committed.forcedFinalReason,
    ...(forceSynthesis ? { forcedBySynthesisRatio: true } : {}),
    turn: committed.turn + 1,
    turnStartedAt: now,
    attemptInTurn: 0,
    consecutiveRateLimits: 0,
  };
  return prepareInference(nextTurn, now, context, collector.entries);
}

function decide(state: SessionState, now: number, context: SessionContext): TerminalDecision | null {
  const contract = context.contract;
  // 1. Interrupt and timeouts.
  if (state.interrupted && state.pendingApprovals.length > 0) {
    return failure(
      "INTERRUPTED",
      "approval_required",
      "APPROVAL_REQUIRED",
      `waiting for approval of ${state.pendingApprovals.join(", ")}: resume with --approve or --deny`,
      "approval_required",
    );
  }
  if (state.interrupted)
    return failure("INTERRUPTED", "interrupt", "INTERRUPTED", "the run was interrupted", "interrupted");
  if (
    state.timedOut === "total" ||
    (contract.total_timeout_ms !== null && now - state.startedAt > contract.total_timeout_ms)
  ) {
    return failure(
      "FAILED_TIMEOUT",
      "total_timeout",
      "TIMEOUT",
      `total_timeout_ms ${contract.total_timeout_ms} exceeded`,
      "total_timeout",
    );
  }
  if (
    state.timedOut === "step" ||
    (contract.step_timeout_ms !== null && now - state.turnStartedAt > contract.step_timeout_ms)
  ) {
    return failure(
      "FAILED_TIMEOUT",
      "step_timeout",
      "TIMEOUT",
      `step_timeout_ms ${contract.step_timeout_ms} exceeded in turn ${state.turn}`,
      "step_timeout",
    );
  }

  const violation = state.violation;
  // 2. Budgets: the retry budget of a turn, the provider's quota, and — only when another inference
  //    would be needed — the inference and token budgets.
  if (violation?.kind === "attempts_exhausted") {
    // A run that never reached its model keeps the outcome class (its attempts were spent) but says so in its
    // code and its report's reason (docs/architecture.md, decisions).
    return failure(
      "FAILED_BUDGET_EXHAUSTED",
      "max_retries",
      violation.code,
      violation.detail,
      violation.code === "MODEL_UNREACHABLE" ? "model_unreachable" : "max_retries_exhausted",
      violation.details,
    );
  }
  if (violation?.kind === "fatal_model_error" && violation.code === "TENANT_BUDGET_EXHAUSTED") {
    // A budget outside the run (a server tenant's) refused the model call before it was made.
    return failure(
      "FAILED_BUDGET_EXHAUSTED",
      "tenant_budget",
      violation.code,
      violation.detail,
      "tenant_budget_exhausted",
    );
  }
  if (violation?.kind === "fatal_model_error" && violation.code === "MODEL_QUOTA_EXCEEDED") {
    return failure(
      "FAILED_BUDGET_EXHAUSTED",
      "provider_quota",
      violation.code,
      violation.detail,
      "quota_exceeded",
    );
  }
  const later = decideAfterBudgets(state, context);
  if (later === null) {
    if (state.turn >= contract.max_inferences) {
      return failure(
        "FAILED_BUDGET_EXHAUSTED",
        "max_inferences",
        "BUDGET_EXHAUSTED",
        `maxTurns (${contract.max_inferences}) reached without a final report`,
        "max_turns_exhausted",
      );
    }
    if (contract.max_tokens_consumed !== null && state.tokensConsumed >= contract.max_tokens_consumed) {
      return failure(
        "FAILED_BUDGET_EXHAUSTED",
        "max_tokens_consumed",
        "BUDGET_EXHAUSTED",
        `max_tokens_consumed (${contract.max_tokens_consumed}) reached: ${state.tokensConsumed} tokens used`,
        "max_tokens_exhausted",
      );
    }
  }
  return later;
}

/** Predicates 3 (contract violations), 4 (context threshold) and 5 (normal success); null means continue. */
function decideAfterBudgets(state: SessionState, context: SessionContext): TerminalDecision | null {
  const contract = context.contract;
  const violation = state.violation;
  if (violation !== null) {
    switch (violation.kind) {
      case "forbidden_tool_call":
        return failure(
          "FAILED_CONTRACT_VIOLATION",
          "tool_policy_forbidden",
          "CONTRACT_VIOLATION",
          `tool '${violation.tool}' called under tool_policy=forbidden`,
          "contract_violation",
        );
      case "cycle_forbidden":
        return failure(
          "FAILED_CONTRACT_VIOLATION",
          "cycle_forbid",
          "CONTRACT_VIOLATION",
          `forbidden tool sequence ${violation.from} -> ${violation.to}`,
          "contract_violation",
        );
      case "no_tools_exhausted":
        return failure(
          "FAILED_PROTOCOL_NO_TOOLS",
          "tool_policy_required",
          "PROTOCOL_NO_TOOLS",
          "tool_policy=required but the model answered without calling a tool",
          "no_tools",
        );
      case "malformed_exhausted":
        return failure(
          "FAILED_PROTOCOL_MALFORMED",
          "max_format_retries",
          "PROTOCOL_MALFORMED",
          `malformed tool calls beyond max_format_retries: ${violation.detail}`,
          "malformed",
        );
      case "report_invalid_exhausted":
        return violation.code === "OUTPUT_SCHEMA_INVALID"
          ? failure(
              "FAILED_VALIDATION",
              "output_schema",
              "OUTPUT_SCHEMA_INVALID",
              `final report does not match the output schema: ${violation.detail}`,
              "output_schema_invalid",
            )
          : failure(
              "FAILED_PROTOCOL_MALFORMED",
              "max_format_retries",
              "PROTOCOL_MALFORMED",
              `invalid final report: ${violation.detail}`,
              "malformed",
            );
      case "invalid_tool_result":
        return failure(
          "FAILED_VALIDATION",
          "tool_result_envelope",
          "TOOL_RESULT_INVALID",
          violation.detail,
          "invalid_tool_result",
        );
      case "fatal_model_error":
        return failure(
          "FAILED_PREFLIGHT",
          "provider_authentication",
          violation.code,
          violation.detail,
          "authentication_failed",
        );
      case "attempts_exhausted":
        return null;
    }
  }
  // 4. Context threshold. Past `force_synthesis_at_ratio` the synthesis turn ends the run with the outcome the
  //    seed prescribes, whether or not the model reported: by the tools executed, else by the policy.
  if (
    state.forcedAtTurn === state.turn &&
    state.forcedBySynthesisRatio === true &&
    context.rules.synthesisOutcomeByPolicy
  ) {
    if (state.executedToolCount > 0) return synthesis("COMPLETED_WITH_TOOLS", state);
    if (contract.tool_policy === "required") {
      return failure(
        "FAILED_PROTOCOL_NO_TOOLS",
        "force_synthesis_at_ratio",
        "PROTOCOL_NO_TOOLS",
        "force_synthesis_at_ratio reached under tool_policy=required before any tool was executed",
        "no_tools",
      );
    }
    return synthesis("COMPLETED_CHAT_ONLY", state);
  }
  //    A turn the context guard forced that produced no report ends the run.
  if (state.finalReport === null && state.forcedAtTurn === state.turn) {
    return failure(
      "FAILED_BUDGET_EXHAUSTED",
      "context_window",
      "BUDGET_EXHAUSTED",
      "the context window is exhausted and the forced final turn produced no report",
      "context_window_exhausted",
    );
  }
  // 5. Normal success.
  if (state.finalReport !== null) {
    if (state.executedToolCount > 0) return success("COMPLETED_WITH_TOOLS");
    if (contract.tool_policy === "required") {
      return failure(
        "FAILED_PROTOCOL_NO_TOOLS",
        "tool_policy_required",
        "PROTOCOL_NO_TOOLS",
        "tool_policy=required but no tool was executed",
        "no_tools",
      );
    }
    return success("COMPLETED_CHAT_ONLY");
  }
  return null;
}

/** The synthesis turn's outcome: the model's report when it gave one, else a synthetic one (see terminate). */
function synthesis(outcome: AgentOutcome, state: SessionState): TerminalDecision {
  return {
    outcome,
    predicate: "force_synthesis_at_ratio",
    error: null,
    reason: state.finalReport === null ? "synthesis_without_report" : "completed",
  };
}

function success(outcome: AgentOutcome): TerminalDecision {
  return { outcome, predicate: "success", error: null, reason: "completed" };
}

function failure(
  outcome: AgentOutcome,
  predicate: string,
  code: ErrorCode,
  message: string,
  reason: string,
  details?: Readonly<Record<string, unknown>>,
): TerminalDecision {
  return {
    outcome,
    predicate,
    error: details === undefined ? { code, message } : { code, message, details },
    reason,
  };
}
