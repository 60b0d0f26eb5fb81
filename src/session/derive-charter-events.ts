import { isSuccessfulOutcome } from "../contract/agent-outcome.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import type { CharterEvent } from "./charter-event.js";
import type { SessionState } from "./session-state.js";
import type { TransitionOutput } from "./transition-output.js";

/**
 * The events one transition produced, computed from the state before it, the state after it and the next
 * effect. Pure: replaying the transitions of a run gives the same events.
 */
export function deriveCharterEvents(
  previous: SessionState,
  output: TransitionOutput,
  contract: ExecutionContract,
): CharterEvent[] {
  const events: CharterEvent[] = [];
  const next = output.state;
  const runId = next.runId;

  // Attempts and tool calls that ended in this transition: the accounting entries it appended.
  for (let index = previous.accounting.length; index < next.accounting.length; index++) {
    const entry = next.accounting[index]!;
    if (entry.type === "llm") {
      events.push({
        type: "model_attempt_ended",
        runId,
        turn: entry.turn,
        attempt: entry.attempt,
        provider: entry.provider,
        model: entry.model,
        status: entry.status,
        errorCode: entry.errorCode ?? null,
        latencyMs: entry.latency,
        tokens: { input: entry.tokens.input, output: entry.tokens.output },
        costUsd: entry.costUsd ?? null,
      });
    } else {
      events.push({
        type: "tool_call_ended",
        runId,
        turn: entry.turn,
        callId: entry.callId,
        name: entry.command,
        status: entry.status,
        errorCode: entry.errorCode ?? null,
        latencyMs: entry.latency,
        cacheHit: entry.cache_hit ?? null,
        resultCharacters: entry.charactersOut,
      });
    }
  }
  if (next.forcedFinalTurn && !previous.forcedFinalTurn) {
    events.push({
      type: "context_guard_fired",
      runId,
      turn: next.turn,
      reason: next.forcedFinalReason ?? "",
    });
  }

  const effect = output.effect;
  if (effect.type === "infer") {
    if (effect.attempt === 1) {
      events.push({ type: "turn_started", runId, turn: effect.turn, maxTurns: contract.max_inferences });
    }
    const target = contract.model_targets[effect.targetIndex];
    events.push({
      type: "model_attempt_started",
      runId,
      turn: effect.turn,
      attempt: effect.attempt,
      provider: target?.provider ?? "unknown",
      model: target?.model ?? "unknown",
      forcedFinalTurn: next.forcedFinalTurn,
    });
  } else if (effect.type === "execute_tools") {
    for (const call of effect.calls) {
      events.push({
        type: "tool_call_started",
        runId,
        turn: effect.turn,
        callId: call.id,
        name: call.name,
        arguments: call.arguments,
      });
    }
  } else if (effect.type === "terminate" && next.outcome !== null) {
    if (next.finalReport !== null) events.push({ type: "final_report", runId, report: next.finalReport });
    events.push({
      type: "outcome",
      runId,
      outcome: next.outcome,
      success: isSuccessfulOutcome(next.outcome) && next.error === null,
      error: next.error,
      turns: next.turn,
    });
  }
  return events;
}
