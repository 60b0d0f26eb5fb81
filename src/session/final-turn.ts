import type { SessionContext } from "./session-context.js";
import type { SessionState } from "./session-state.js";

/**
 * Whether the turn in progress is the last one `max_inferences` allows and, under the contract's rules, offers
 * only `final_report`: a model that still wants tools then reports what it has instead of ending in a
 * synthetic `max_turns_exhausted` failure. A single-turn contract keeps its tools: its only turn is also its
 * first, and offering nothing but the report would make every tool unreachable.
 */
export function isReportOnlyLastTurn(state: SessionState, context: SessionContext): boolean {
  const maxTurns = context.contract.max_inferences;
  return context.rules.lastTurnOffersOnlyReport && maxTurns > 1 && state.turn >= maxTurns;
}

/**
 * The token gate (seed 002 Invariant F, `token_gate: true` under `tool_policy: required`): until an agent tool
 * call has executed, every request asks the provider for a tool call and no text is streamed to the user.
 */
export function isTokenGateClosed(state: SessionState, context: SessionContext): boolean {
  const contract = context.contract;
  return (
    context.rules.tokenGate &&
    contract.token_gate &&
    contract.tool_policy === "required" &&
    state.executedToolCount === 0
  );
}
