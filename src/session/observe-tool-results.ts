import { type AgentMessage, toolMessage } from "../contract/agent-message.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import type { AccountingEntry } from "./accounting-entry.js";
import { commitTurn } from "./commit-turn.js";
import { exceedsContextLimit } from "./context-guard.js";
import type { SessionContext } from "./session-context.js";
import type { PendingViolation, SessionState } from "./session-state.js";
import type { EntryCollector, TransitionOutput } from "./transition-output.js";

/** The transaction id of one tool call: unique in the run, and computable by the tool from its context. */
export function toolCallTransactionId(runId: string, callId: string): string {
  return `${runId}/${callId}`;
}

export const contextBudgetExceededContent = "(tool failed: context window budget exceeded)";
const resultStatuses = new Set(["ok", "failed", "dropped"]);

/**
 * OBSERVE: turns tool results into tool messages, in the order of the calls, one per call so that the
 * conversation stays provider-valid. The context guard runs on each output: one that would overflow the
 * window is replaced and the next turn is a forced final turn (seed 000 §2).
 */
export function observeToolResults(
  state: SessionState,
  now: number,
  results: readonly ToolExecutionResult[],
  context: SessionContext,
  collector: EntryCollector,
): TransitionOutput {
  const contract = context.contract;
  const message = state.turnMessage;
  const byCallId = new Map<string, ToolExecutionResult>();
  for (const result of results) byCallId.set(result.call_id, result);

  let violation: PendingViolation | null = null;
  let forced = state.forcedFinalTurn;
  let forcedReason = state.forcedFinalReason;
  let pending = message ? context.countMessage(message) : 0;
  const counters = state.counters;
  const toolMessages: AgentMessage[] = [];
  const observed: { error_code: string | null; guarded: boolean; id: string; status: string }[] = [];
  const accounting: AccountingEntry[] = [];
  let executed = 0;
  let lastExecuted = state.lastExecutedTool;
  const toolsUsed = [...state.toolsUsed];

  for (const call of message?.tool_calls ?? []) {
    const result = byCallId.get(call.id);
    const plan = state.plannedToolMessages.get(call.id);
    let content: string;
    let status: string;
    let errorCode: string | null;
    if (result !== undefined) {
      // Seed 002 Phase 3: a malformed tool result envelope fails the run.
      if (typeof result.content !== "string" || !resultStatuses.has(result.status)) {
        violation ??= {
          kind: "invalid_tool_result",
          detail: `tool '${call.name}' returned a malformed result envelope`,
        };
        content = "(tool failed: malformed result)";
        status = "failed";
        errorCode = "TOOL_RESULT_INVALID";
      } else {
        content = result.content;
        status = result.status;
        errorCode = result.error_code;
      }
      if (result.executed) {
        executed++;
        lastExecuted = call.name;
        if (!toolsUsed.includes(call.name)) toolsUsed.push(call.name);
      }
      // Child work a tool ran (a sub-agent, an extraction) comes first: it happened inside this call.
      for (const child of result.accounting ?? []) accounting.push(child as AccountingEntry);
      accounting.push({
        type: "tool",
        mcpServer: result.source.server ?? result.source.kind,
        command: result.source.tool,
        status: result.status === "ok" ? "ok" : "failed",
        latency: result.latency_ms,
        timestamp: now,
        charactersIn: result.characters_in,
        charactersOut: result.characters_out,
        agentId: context.agentId,
        callPath: context.callPath,
        // The transaction a sub-agent run started by this call names as its parent.
        txnId: toolCallTransactionId(state.runId, call.id),
        ...(context.parentTxnId !== null ? { parentTxnId: context.parentTxnId } : {}),
        ...(context.originTxnId !== null ? { originTxnId: context.originTxnId } : {}),
        turn: state.turn,
        callId: call.id,
        ...(result.error_code ? { errorCode: result.error_code } : {}),
        ...(result.cache_hit !== undefined ? { cache_hit: result.cache_hit } : {}),
      });
    } else if (plan !== undefined) {
      content = plan.content;
      status = plan.status;
      errorCode = plan.error_code;
    } else {
      content = "(tool failed: not executed)";
      status = "failed";
      errorCode = "TOOL_EXECUTION_FAILED";
    }
    let reply = toolMessage(call.id, call.name, content);
    let tokens = context.countMessage(reply);
    let guarded = false;
    if (
      exceedsContextLimit(
        contract,
        { ...counters, pendingCtxTokens: pending },
        tokens,
        state.tokenCalibration,
      )
    ) {
      reply = toolMessage(call.id, call.name, contextBudgetExceededContent);
      tokens = context.countMessage(reply);
      guarded = true;
      forced = true;
      forcedReason = "A tool output did not fit in the context window.";
    }
    pending += tokens;
    toolMessages.push(reply);
    observed.push({
      error_code: guarded ? "TOOL_CONTEXT_BUDGET_EXCEEDED" : errorCode,
      guarded,
      id: call.id,
      status: guarded ? "failed" : status,
    });
  }

  const executedToolCount = state.executedToolCount + executed;
  let finalReport = state.finalReport;
  if (state.reportCandidate !== null && (contract.tool_policy !== "required" || executedToolCount > 0)) {
    finalReport = state.reportCandidate;
  }

  const next: SessionState = {
    ...state,
    phase: "OBSERVE",
    violation: state.violation ?? violation,
    executedToolCount,
    lastExecutedTool: lastExecuted,
    toolsUsed,
    forcedFinalTurn: forced,
    forcedFinalReason: forcedReason,
    finalReport,
    reportCandidate: null,
    turnToolResults: results,
    counters: { ...counters, pendingCtxTokens: pending },
    accounting: accounting.length > 0 ? [...state.accounting, ...accounting] : state.accounting,
  };
  collector.add(
    next,
    "OBSERVE",
    now,
    { results: observed.length },
    { forced_final_turn: forced, observed, pending_ctx_tokens: pending },
  );
  return commitTurn(next, now, context, collector, toolMessages);
}
