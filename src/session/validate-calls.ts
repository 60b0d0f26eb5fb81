import type { AgentMessage, ToolInvocation } from "../contract/agent-message.js";
import type { RejectedToolCall } from "../contract/protocol-adapter-result.js";
import { finalReportToolName } from "./final-report.js";
import { isReportOnlyLastTurn } from "./final-turn.js";
import { observeToolResults, reportRefusedContent } from "./observe-tool-results.js";
import { retryNotices } from "./retry-notices.js";
import type { SessionContext } from "./session-context.js";
import type { PendingViolation, PlannedToolMessage, SessionState } from "./session-state.js";
import type { EntryCollector, TransitionOutput } from "./transition-output.js";
import { retryOrStop, stopTurn } from "./turn-retry.js";

/**
 * VALIDATE_CALLS: decides, for an accepted response, which calls run and which are answered without
 * running (excess calls, forbidden calls, forbidden sequences, final_report) — seed 002 policy and
 * seed 000 limits. Pure: the effect to execute the chosen calls is returned, not performed.
 */
export function validateCalls(
  state: SessionState,
  now: number,
  context: SessionContext,
  collector: EntryCollector,
  message: AgentMessage,
  rejected: readonly RejectedToolCall[],
): TransitionOutput {
  const contract = context.contract;
  if (message.tool_calls.length === 0 && rejected.length === 0) {
    return acceptTextAnswer(state, now, context, collector, message);
  }

  let formatRetriesUsed = state.formatRetriesUsed;
  let violation: PendingViolation | null = null;
  const notices: AgentMessage[] = [];
  const planned = new Map<string, PlannedToolMessage>();
  const toExecute: ToolInvocation[] = [];
  let reportCandidate: { callId: string; report: NonNullable<SessionState["reportCandidate"]> } | null = null;

  if (rejected.length > 0) {
    formatRetriesUsed++;
    if (formatRetriesUsed > contract.max_format_retries) {
      violation = { kind: "malformed_exhausted", detail: rejected.map((call) => call.detail).join("; ") };
    } else notices.push(retryNotices.rejectedCalls(rejected));
  }

  let previous = state.lastExecutedTool;
  let counted = 0;
  // Only final_report was offered: another call is answered, never run.
  const reportOnlyTurn = isReportOnlyLastTurn(state, context);
  for (const call of message.tool_calls) {
    if (call.name === finalReportToolName) {
      if (reportCandidate !== null) {
        planned.set(
          call.id,
          failed("(tool failed: duplicate final_report; only the first one is used)", "TOOL_CALL_DROPPED"),
        );
        continue;
      }
      const validation = context.validateFinalReport(call.arguments);
      if (!validation.ok) {
        planned.set(
          call.id,
          failed(`(tool failed: invalid final report: ${validation.errors.join("; ")})`, validation.code),
        );
        formatRetriesUsed++;
        if (formatRetriesUsed > contract.max_format_retries) {
          violation ??= {
            kind: "report_invalid_exhausted",
            code: validation.code,
            detail: validation.errors.join("; "),
          };
        }
        continue;
      }
      reportCandidate = {
        callId: call.id,
        report: {
          status: "success",
          source: "tool",
          format: contract.output.format,
          ...(validation.report.content !== undefined ? { content: validation.report.content } : {}),
          ...(validation.report.content_json !== undefined
            ? { content_json: validation.report.content_json }
            : {}),
          ...(validation.report.metadata !== undefined ? { metadata: validation.report.metadata } : {}),
          ts: new Date(now).toISOString(),
        },
      };
      planned.set(call.id, { content: "Final report received.", status: "ok", error_code: null });
      continue;
    }
    if (contract.tool_policy === "forbidden") {
      violation ??= { kind: "forbidden_tool_call", tool: call.name };
      planned.set(
        call.id,
        failed("(tool failed: tool calls are forbidden by this contract)", "CONTRACT_VIOLATION"),
      );
      continue;
    }
    if (state.forcedFinalTurn || reportOnlyTurn) {
      planned.set(call.id, failed("(tool failed: only final_report is available now)", "TOOL_NOT_ALLOWED"));
      continue;
    }
    counted++;
    if (counted > contract.max_tool_calls_per_turn) {
      planned.set(call.id, {
        content: `(tool failed: dropped: more than ${contract.max_tool_calls_per_turn} tool calls in one turn (maxToolCallsPerTurn); this call was not executed)`,
        status: "dropped",
        error_code: "TOOL_CALL_DROPPED",
      });
      continue;
    }
    if (
      previous !== null &&
      contract.cycle_forbid.some(([from, to]) => from === previous && to === call.name)
    ) {
      violation ??= { kind: "cycle_forbidden", from: previous, to: call.name };
      planned.set(
        call.id,
        failed(
          `(tool failed: the sequence ${previous} -> ${call.name} is forbidden by this contract)`,
          "CONTRACT_VIOLATION",
        ),
      );
      continue;
    }
    toExecute.push(call);
    previous = call.name;
  }

  // Invariant C: under `required`, a report with no agent tool executed before it or about to run beside it
  // is refused. Charter's built-ins (tool_output) do not count: reading a stored output is not acting.
  if (
    reportCandidate !== null &&
    contract.tool_policy === "required" &&
    state.executedToolCount === 0 &&
    !toExecute.some((call) => context.isAgentTool(call.name))
  ) {
    planned.set(reportCandidate.callId, failed(reportRefusedContent, "CONTRACT_VIOLATION"));
    reportCandidate = null;
    formatRetriesUsed++;
    if (formatRetriesUsed > contract.max_format_retries) violation ??= { kind: "no_tools_exhausted" };
    else notices.push(retryNotices.toolRequired());
  }

  if (violation !== null) {
    // The run ends at this COMMIT: nothing more is executed.
    for (const call of toExecute) {
      planned.set(
        call.id,
        failed("(tool failed: not executed: the run is ending on a contract failure)", "CONTRACT_VIOLATION"),
      );
    }
    toExecute.length = 0;
  }

  const next: SessionState = {
    ...state,
    phase: "VALIDATE_CALLS",
    formatRetriesUsed,
    violation: state.violation ?? violation,
    retryNotices: notices,
    turnMessage: message,
    callsToExecute: toExecute,
    plannedToolMessages: planned,
    reportCandidate: reportCandidate?.report ?? null,
  };
  collector.add(
    next,
    "VALIDATE_CALLS",
    now,
    {
      calls: message.tool_calls.map((call) => ({ id: call.id, name: call.name })),
      rejected_calls: rejected.length,
    },
    {
      execute: toExecute.map((call) => call.id),
      planned: [...planned].map(([id, plan]) => ({ error_code: plan.error_code, id, status: plan.status })),
      violation: violation?.kind ?? null,
    },
  );
  if (toExecute.length > 0) {
    return {
      state: { ...next, phase: "EXECUTE" },
      entries: collector.entries,
      effect: { type: "execute_tools", turn: state.turn, calls: toExecute },
    };
  }
  collector.add(next, "EXECUTE", now, { calls: [] }, { results: [] });
  return observeToolResults(next, now, [], context, collector);
}

/** A response with text and no tool calls: a terminal answer when the policy allows it (seed 002 predicate 5). */
function acceptTextAnswer(
  state: SessionState,
  now: number,
  context: SessionContext,
  collector: EntryCollector,
  message: AgentMessage,
): TransitionOutput {
  const contract = context.contract;
  if (contract.tool_policy === "required" && state.executedToolCount === 0) {
    // Narration instead of action (Invariant C, F): retry within max_format_retries, then fail.
    const used = state.formatRetriesUsed + 1;
    if (used > contract.max_format_retries) {
      return stopTurn({ ...state, formatRetriesUsed: used }, now, context, collector, {
        kind: "no_tools_exhausted",
      });
    }
    return retryOrStop(
      { ...state, formatRetriesUsed: used },
      now,
      context,
      collector,
      retryNotices.toolRequired(),
      {
        kind: "no_tools_exhausted",
      },
    );
  }
  let report: NonNullable<SessionState["reportCandidate"]>;
  if (contract.output.format === "json") {
    const validation = context.validateTextAsJsonReport(message.content);
    if (!validation.ok) {
      const used = state.formatRetriesUsed + 1;
      const exhausted: PendingViolation = {
        kind: "report_invalid_exhausted",
        code: validation.code,
        detail: validation.errors.join("; "),
      };
      if (used > contract.max_format_retries)
        return stopTurn({ ...state, formatRetriesUsed: used }, now, context, collector, exhausted);
      return retryOrStop(
        { ...state, formatRetriesUsed: used },
        now,
        context,
        collector,
        retryNotices.reportInvalid(validation.errors),
        exhausted,
      );
    }
    report = {
      status: "success",
      source: "text_fallback",
      format: "json",
      content_json: validation.report.content_json,
      ts: new Date(now).toISOString(),
    };
  } else {
    report = {
      status: "success",
      source: "text_fallback",
      format: contract.output.format,
      content: message.content,
      ts: new Date(now).toISOString(),
    };
  }
  const next: SessionState = {
    ...state,
    phase: "VALIDATE_CALLS",
    retryNotices: [],
    turnMessage: message,
    callsToExecute: [],
    plannedToolMessages: new Map(),
    reportCandidate: report,
  };
  collector.add(next, "VALIDATE_CALLS", now, { calls: [] }, { execute: [], text_answer: true });
  collector.add(next, "EXECUTE", now, { calls: [] }, { results: [] });
  return observeToolResults(next, now, [], context, collector);
}

function failed(content: string, code: PlannedToolMessage["error_code"]): PlannedToolMessage {
  return { content, status: "failed", error_code: code };
}
