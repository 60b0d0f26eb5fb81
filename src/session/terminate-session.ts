import { syntheticCompletionReport, syntheticFailureReport } from "./final-report.js";
import type { SessionContext } from "./session-context.js";
import type { SessionState } from "./session-state.js";
import type { TerminalDecision } from "./terminal-decision.js";
import type { EntryCollector, TransitionOutput } from "./transition-output.js";

/**
 * TERMINATE: emits the typed outcome from the finalized state. A failed run always carries a synthetic
 * failure report (status `failure`, source `synthetic`), so every run ends with a report.
 */
export function terminateSession(
  state: SessionState,
  now: number,
  context: SessionContext,
  collector: EntryCollector,
  decision: TerminalDecision,
): TransitionOutput {
  const format = context.contract.output.format;
  const report =
    decision.error === null && state.finalReport !== null
      ? state.finalReport
      : decision.error === null
        ? // A completion without a model report (the synthesis turn gave none): a synthetic report of what ran.
          syntheticCompletionReport(format, decision.reason, now, {
            outcome: decision.outcome,
            turns: state.turn,
            tools_used: state.toolsUsed,
          })
        : syntheticFailureReport(format, decision.reason, decision.error?.message ?? decision.reason, now, {
            outcome: decision.outcome,
            turns: state.turn,
            ...(state.pendingApprovals.length > 0 ? { pending_approvals: state.pendingApprovals } : {}),
            ...(state.finalReport !== null ? { discarded_report_source: state.finalReport.source } : {}),
          });
  const terminated: SessionState = {
    ...state,
    phase: "TERMINATE",
    outcome: decision.outcome,
    error: decision.error,
    finalReport: report,
  };
  collector.add(
    terminated,
    "TERMINATE",
    now,
    { predicate: decision.predicate },
    { error: decision.error, final_report: report, outcome: decision.outcome },
  );
  return { state: terminated, entries: collector.entries, effect: { type: "terminate" } };
}
