import { type AgentMessage, type ContentAttachment, toolMessage } from "../contract/agent-message.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import type { AccountingEntry } from "./accounting-entry.js";
import { commitTurn } from "./commit-turn.js";
import { exceedsContextLimit } from "./context-guard.js";
import { finalReportToolName } from "./final-report.js";
import { retryNotices } from "./retry-notices.js";
import { runIdentityFields } from "./run-identity-fields.js";
import type { SessionContext } from "./session-context.js";
import type { PendingViolation, SessionState } from "./session-state.js";
import type { EntryCollector, TransitionOutput } from "./transition-output.js";

/** The transaction id of one tool call: unique in the run, and computable by the tool from its context. */
export function toolCallTransactionId(runId: string, callId: string): string {
  return `${runId}/${callId}`;
}

export const contextBudgetExceededContent = "(tool failed: context window budget exceeded)";
/** What the model is told when `tool_policy: required` refuses its report (no agent tool has run yet). */
export const reportRefusedContent = "(tool failed: tool_policy=required: call a tool before final_report)";
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
  let lastExecuted = state.lastExecutedTool;
  const toolsUsed = [...state.toolsUsed];

  // Invariant C counts executions of agent tools only, whatever their result (ok, a tool-reported error, a
  // timeout): the call passed validation and the tool ran. A report accepted beside an agent tool call that
  // then did not run (its input was invalid, the policy refused it) cannot stand under `required`.
  let agentExecutions = 0;
  for (const result of results)
    if (result.executed && context.isAgentTool(result.tool_name)) agentExecutions++;
  const executedToolCount = state.executedToolCount + agentExecutions;
  const refuseReport =
    state.reportCandidate !== null && contract.tool_policy === "required" && executedToolCount === 0;

  for (const call of message?.tool_calls ?? []) {
    const result = byCallId.get(call.id);
    const plan = state.plannedToolMessages.get(call.id);
    let content: string;
    let attachments: readonly ContentAttachment[] | undefined;
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
        // Only stored attachments (by hash) enter the conversation; the driver stores every one it is handed.
        attachments = result.attachments?.filter(
          (attachment): attachment is ContentAttachment => "payload_hash" in attachment,
        );
        // The pipeline already refused the tool's output as a malformed envelope: that fails the run too.
        if (errorCode === "TOOL_RESULT_INVALID" && context.rules.malformedToolResultFailsRun) {
          violation ??= {
            kind: "invalid_tool_result",
            detail: `tool '${call.name}' returned a malformed result envelope: ${content}`,
          };
        }
      }
      if (result.executed) {
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
        ...runIdentityFields(context),
        turn: state.turn,
        callId: call.id,
        ...(result.error_code ? { errorCode: result.error_code } : {}),
        ...(result.cache_hit !== undefined ? { cache_hit: result.cache_hit } : {}),
      });
    } else if (plan !== undefined) {
      // The accepted report is the one final_report call planned as ok.
      const refused = refuseReport && call.name === finalReportToolName && plan.status === "ok";
      content = refused ? reportRefusedContent : plan.content;
      status = refused ? "failed" : plan.status;
      errorCode = refused ? "CONTRACT_VIOLATION" : plan.error_code;
    } else {
      content = "(tool failed: not executed)";
      status = "failed";
      errorCode = "TOOL_EXECUTION_FAILED";
    }
    let reply = toolMessage(call.id, call.name, content, attachments);
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

  let finalReport = state.finalReport;
  let formatRetriesUsed = state.formatRetriesUsed;
  let notices = state.retryNotices;
  if (state.reportCandidate !== null && !refuseReport) finalReport = state.reportCandidate;
  if (refuseReport) {
    // As for a report refused in VALIDATE_CALLS: the model is told, and it costs a format retry.
    formatRetriesUsed++;
    if (formatRetriesUsed > contract.max_format_retries) violation ??= { kind: "no_tools_exhausted" };
    else notices = [...notices, retryNotices.toolRequired()];
  }

  const next: SessionState = {
    ...state,
    phase: "OBSERVE",
    violation: state.violation ?? violation,
    executedToolCount,
    formatRetriesUsed,
    retryNotices: notices,
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
