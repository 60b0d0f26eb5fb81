import type { AgentMessage } from "../contract/agent-message.js";
import { commitTurn } from "./commit-turn.js";
import { prepareInference } from "./prepare-inference.js";
import type { SessionContext } from "./session-context.js";
import type { PendingViolation, SessionState } from "./session-state.js";
import type { EntryCollector, TransitionOutput } from "./transition-output.js";

/** Retries within the turn while attempts remain; otherwise stops the turn with the given violation. */
export function retryOrStop(
  state: SessionState,
  now: number,
  context: SessionContext,
  collector: EntryCollector,
  notice: AgentMessage | null,
  exhausted: PendingViolation,
): TransitionOutput {
  if (state.attemptInTurn >= context.contract.max_retries) {
    return stopTurn(state, now, context, collector, exhausted);
  }
  const withNotice = notice ? { ...state, retryNotices: [...state.retryNotices, notice] } : state;
  return prepareInference(withNotice, now, context, collector.entries);
}

/**
 * Ends the turn without executing anything: walks VALIDATE_CALLS, EXECUTE and OBSERVE with nothing to do
 * (so no path bypasses the state accounting) and lets COMMIT decide the outcome.
 */
export function stopTurn(
  state: SessionState,
  now: number,
  context: SessionContext,
  collector: EntryCollector,
  violation: PendingViolation | null,
): TransitionOutput {
  const stopped: SessionState = {
    ...state,
    violation: state.violation ?? violation,
    turnMessage: null,
    callsToExecute: [],
    turnToolResults: [],
  };
  collector.add(
    stopped,
    "VALIDATE_CALLS",
    now,
    { calls: [] },
    { stopped: violation?.kind ?? "interrupted_or_timeout" },
  );
  collector.add(stopped, "EXECUTE", now, { calls: [] }, { results: [] });
  collector.add(stopped, "OBSERVE", now, { results: [] }, { messages: [] });
  return commitTurn(stopped, now, context, collector, []);
}
