import type { ToolInvocation } from "../contract/agent-message.js";
import type { ToolManifestEntry } from "../contract/execution-contract.js";
import { contentHash } from "../foundation/content-hash.js";
import type { ToolCallExecutor } from "../session/session-dependencies.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import { refusedToolResult } from "./refused-tool-result.js";

/** How a tool may be repeated (seed 004 "Idempotency & Retry Safety"), from its annotations or configuration. */
export type IdempotencyClass = "read_only" | "idempotent" | "destructive" | "unknown";

export function idempotencyClassOf(
  tool: ToolManifestEntry | undefined,
  destructiveTools: ReadonlySet<string>,
): IdempotencyClass {
  if (tool === undefined) return "unknown";
  if (destructiveTools.has(tool.name)) return "destructive";
  const annotations = tool.annotations ?? {};
  if (annotations.destructiveHint === true) return "destructive";
  if (annotations.readOnlyHint === true) return "read_only";
  if (annotations.idempotentHint === true) return "idempotent";
  // A tool without annotations is treated as not idempotent: never re-run automatically, no approval needed.
  return "unknown";
}

/**
 * One call of one turn. The model chooses call ids (providers number them `call_0`, `call_1`... in every
 * response), so an id alone names nothing: what a decision or a stored result is for is the call's turn, id,
 * tool and arguments together.
 */
export interface TurnCall {
  readonly turn: number;
  readonly call: Pick<ToolInvocation, "id" | "name" | "arguments">;
}

/** `--approve <call-id>` / `--deny <call-id>`, bound to the exact pending call it was given for. */
export interface ToolCallDecision extends TurnCall {
  readonly decision: "approve" | "deny";
}

/** A call of the resumed EXECUTE that completed before the process stopped, with its stored result. */
export interface CompletedToolCall extends TurnCall {
  readonly result: ToolExecutionResult;
}

export interface ToolCallGuardOptions {
  readonly manifest: readonly ToolManifestEntry[];
  /** Tools that need an approval before each call, beside those annotated `destructiveHint: true`. */
  readonly destructiveTools?: readonly string[];
  /** Destructive tools approved in advance (configuration). */
  readonly preApprovedTools?: readonly string[];
  /** Decisions given on resume, each applied once, to its own call only. */
  readonly decisions?: readonly ToolCallDecision[];
  /** Calls that completed before the process stopped: answered once from their results, never executed again. */
  readonly completed?: readonly CompletedToolCall[];
  /**
   * The call that may have been running when the process died (the first call of the resumed EXECUTE without a
   * recorded result): re-run only when read-only or idempotent.
   */
  readonly possiblyInFlight?: TurnCall | null;
}

/** What identifies a call of a turn: the canonical hash of its turn, id, tool and arguments. */
export function turnCallKey(turn: number, call: Pick<ToolInvocation, "id" | "name" | "arguments">): string {
  return contentHash({
    arguments: call.arguments ?? null,
    id: call.id,
    kind: "charter.turn-call",
    tool: call.name,
    turn,
    v: 1,
  });
}

/** Values by their call's key, each taken at most once (two identical calls in a turn take one each). */
function queuesByKey<Value extends TurnCall>(values: readonly Value[]): Map<string, Value[]> {
  const queues = new Map<string, Value[]>();
  for (const value of values) {
    const key = turnCallKey(value.turn, value.call);
    const queue = queues.get(key);
    if (queue === undefined) queues.set(key, [value]);
    else queue.push(value);
  }
  return queues;
}

function take<Value>(queues: Map<string, Value[]>, key: string): Value | undefined {
  const queue = queues.get(key);
  const value = queue?.shift();
  if (queue !== undefined && queue.length === 0) queues.delete(key);
  return value;
}

/**
 * Wraps the tool executor with the durable-run rules: a destructive call needs a confirmation the model cannot
 * forge (an approval given outside the conversation), a completed call is never executed again, and a call that
 * may have been in flight when the process died is re-run only when it is read-only or idempotent — otherwise
 * the model is told its outcome is unknown. A decision, a stored result and the in-flight mark each apply once,
 * to the call of the same turn, id, tool and arguments only: a later call that reuses an id is a new call.
 */
export function guardToolCalls(executor: ToolCallExecutor, options: ToolCallGuardOptions): ToolCallExecutor {
  const byName = new Map(options.manifest.map((tool) => [tool.name, tool]));
  const destructive = new Set(options.destructiveTools ?? []);
  const preApproved = new Set(options.preApprovedTools ?? []);
  const completedCalls = queuesByKey(options.completed ?? []);
  const decisions = queuesByKey(options.decisions ?? []);
  let possiblyInFlight =
    options.possiblyInFlight === undefined || options.possiblyInFlight === null
      ? null
      : turnCallKey(options.possiblyInFlight.turn, options.possiblyInFlight.call);
  return async (call, context) => {
    // Only a resumed run has anything to match; a fresh one never hashes its calls here.
    const key =
      completedCalls.size > 0 || decisions.size > 0 || possiblyInFlight !== null
        ? turnCallKey(context.turn, call)
        : null;
    const completed = key === null ? undefined : take(completedCalls, key);
    if (completed !== undefined) return completed.result;
    const decision = key === null ? undefined : take(decisions, key)?.decision;
    const inFlight = key !== null && key === possiblyInFlight;
    if (inFlight) possiblyInFlight = null;
    const idempotency = idempotencyClassOf(byName.get(call.name), destructive);
    if (inFlight && decision === undefined && idempotency !== "read_only" && idempotency !== "idempotent") {
      return refusedToolResult(
        call,
        "TOOL_OUTCOME_UNKNOWN",
        `(tool failed: outcome unknown: the process stopped while '${call.name}' was running; it is not idempotent, so it was not run again. Check its effect before repeating it.)`,
      );
    }
    if (idempotency === "destructive" && !preApproved.has(call.name)) {
      if (decision === "deny")
        return refusedToolResult(
          call,
          "TOOL_CALL_DENIED",
          `(tool failed: denied: the user refused to run '${call.name}')`,
        );
      if (decision !== "approve") {
        return refusedToolResult(
          call,
          "APPROVAL_REQUIRED",
          `(tool failed: '${call.name}' needs an approval before it runs)`,
        );
      }
    }
    return executor(call, context);
  };
}
