import type { ToolInvocation } from "../contract/agent-message.js";
import { CharterError } from "../foundation/charter-error.js";
import type { PendingApproval } from "../session/pending-approval.js";
import type { SessionCheckpoint } from "../session/session-checkpoint.js";
import type { ToolResultRecord } from "../store/stored-records.js";
import { toolRequestHash } from "../store/tool-request-hash.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import type { CompletedToolCall, ToolCallDecision, TurnCall } from "./guard-tool-calls.js";

/** What the tool guard of a resumed run is given (see guard-tool-calls.ts). */
export interface ResumedToolCalls {
  readonly completed: readonly CompletedToolCall[];
  readonly possiblyInFlight: TurnCall | null;
  readonly decisions: readonly ToolCallDecision[];
}

/**
 * Binds what a resume knows to the exact calls of the resumed EXECUTE (the checkpoint's turn and calls):
 *
 * - a stored result answers the call of the same turn, call id, tool and request hash (tool and arguments) only;
 * - the first call without one may have been in flight when the process died (calls run one at a time), unless
 *   the run stopped for an approval, which stops before that call starts;
 * - `--approve` / `--deny` may name only a call the run waits on (`pending`), and apply to that call alone.
 *
 * Throws ARGUMENT_INVALID (`details.reason: "not_pending"` or `"approved_and_denied"`) for a decision that names
 * anything else, before the run is touched.
 */
export function resumedToolCalls(options: {
  readonly checkpoint: SessionCheckpoint;
  readonly storedResults: readonly ToolResultRecord[];
  readonly awaitingApproval: boolean;
  readonly pending: readonly PendingApproval[];
  readonly approve: readonly string[];
  readonly deny: readonly string[];
}): ResumedToolCalls {
  const { checkpoint } = options;
  const turn = checkpoint.turn;
  const calls: readonly ToolInvocation[] =
    checkpoint.kind === "before_execute" ? checkpoint.state.callsToExecute : [];
  const unmatched = options.storedResults.filter((stored) => stored.turn === turn);
  const completed: CompletedToolCall[] = [];
  const open: ToolInvocation[] = [];
  for (const call of calls) {
    const index = unmatched.findIndex(
      (stored) =>
        stored.callId === call.id &&
        stored.toolName === call.name &&
        stored.requestHash ===
          toolRequestHash({
            server: stored.server,
            tool: (stored.result as ToolExecutionResult).source.tool,
            arguments: call.arguments,
          }),
    );
    if (index === -1) open.push(call);
    else {
      completed.push({ turn, call, result: unmatched[index]?.result as ToolExecutionResult });
      unmatched.splice(index, 1);
    }
  }
  const firstOpen = open[0];
  const possiblyInFlight =
    options.awaitingApproval || firstOpen === undefined ? null : { turn, call: firstOpen };

  // The calls the run waits on, with the arguments it will run them with (the transcript's are redacted).
  const waitingOn = new Map<string, ToolInvocation>();
  if (options.awaitingApproval) {
    for (const approval of options.pending) {
      const call = open.find(
        (candidate) => candidate.id === approval.callId && candidate.name === approval.tool,
      );
      if (approval.turn === turn && call !== undefined && !waitingOn.has(call.id))
        waitingOn.set(call.id, call);
    }
  }
  const decisions: ToolCallDecision[] = [];
  const given = [
    ...options.approve.map((callId) => ({ callId, decision: "approve" as const })),
    ...options.deny.map((callId) => ({ callId, decision: "deny" as const })),
  ];
  for (const { callId, decision } of given) {
    const call = waitingOn.get(callId);
    if (call === undefined) {
      throw new CharterError(
        "ARGUMENT_INVALID",
        waitingOn.size === 0
          ? `--${decision} ${callId}: the run waits on no approval`
          : `--${decision} ${callId}: the run waits on ${[...waitingOn.keys()].join(", ")}, not on ${callId}`,
        { details: { argument: decision, callId, reason: "not_pending", pending: [...waitingOn.keys()] } },
      );
    }
    const earlier = decisions.find((existing) => existing.call.id === callId);
    if (earlier?.decision === decision) continue;
    if (earlier !== undefined) {
      throw new CharterError("ARGUMENT_INVALID", `${callId} is both approved and denied`, {
        details: { argument: decision, callId, reason: "approved_and_denied" },
      });
    }
    decisions.push({ turn, call, decision });
  }
  return { completed, possiblyInFlight, decisions };
}
