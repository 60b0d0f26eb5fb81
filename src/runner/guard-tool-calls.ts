import type { ToolInvocation } from "../contract/agent-message.js";
import type { ToolManifestEntry } from "../contract/execution-contract.js";
import type { ToolCallExecutor } from "../session/session-dependencies.js";
import { freezeToolResult, type ToolExecutionResult } from "../tools/tool-execution-result.js";

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

export interface ToolCallGuardOptions {
  readonly manifest: readonly ToolManifestEntry[];
  /** Tools that need an approval before each call, beside those annotated `destructiveHint: true`. */
  readonly destructiveTools?: readonly string[];
  /** Destructive tools approved in advance (configuration). */
  readonly preApprovedTools?: readonly string[];
  /** Decisions given on resume: `--approve <call-id>` / `--deny <call-id>`. */
  readonly decisions?: ReadonlyMap<string, "approve" | "deny">;
  /** Results of calls that completed before the process stopped: never executed again. */
  readonly completed?: ReadonlyMap<string, ToolExecutionResult>;
  /**
   * The call that may have been running when the process died (the first call of the resumed EXECUTE without a
   * recorded result): re-run only when read-only or idempotent.
   */
  readonly possiblyInFlight?: string | null;
}

function failed(
  call: ToolInvocation,
  code: "APPROVAL_REQUIRED" | "TOOL_CALL_DENIED" | "TOOL_OUTCOME_UNKNOWN",
  content: string,
): ToolExecutionResult {
  return freezeToolResult({
    call_id: call.id,
    tool_name: call.name,
    status: "failed",
    error_code: code,
    content,
    executed: false,
    latency_ms: 0,
    characters_in: 0,
    characters_out: content.length,
    handle: null,
    source: { kind: "builtin", server: null, tool: call.name },
  });
}

/**
 * Wraps the tool executor with the durable-run rules: a destructive call needs a confirmation the model cannot
 * forge (an approval given outside the conversation), a completed call is never executed again, and a call that
 * may have been in flight when the process died is re-run only when it is read-only or idempotent — otherwise
 * the model is told its outcome is unknown.
 */
export function guardToolCalls(executor: ToolCallExecutor, options: ToolCallGuardOptions): ToolCallExecutor {
  const byName = new Map(options.manifest.map((tool) => [tool.name, tool]));
  const destructive = new Set(options.destructiveTools ?? []);
  const preApproved = new Set(options.preApprovedTools ?? []);
  return async (call, context) => {
    const completed = options.completed?.get(call.id);
    if (completed !== undefined) return completed;
    const decision = options.decisions?.get(call.id);
    const idempotency = idempotencyClassOf(byName.get(call.name), destructive);
    if (
      call.id === options.possiblyInFlight &&
      decision === undefined &&
      idempotency !== "read_only" &&
      idempotency !== "idempotent"
    ) {
      return failed(
        call,
        "TOOL_OUTCOME_UNKNOWN",
        `(tool failed: outcome unknown: the process stopped while '${call.name}' was running; it is not idempotent, so it was not run again. Check its effect before repeating it.)`,
      );
    }
    if (idempotency === "destructive" && !preApproved.has(call.name)) {
      if (decision === "deny")
        return failed(
          call,
          "TOOL_CALL_DENIED",
          `(tool failed: denied: the user refused to run '${call.name}')`,
        );
      if (decision !== "approve") {
        return failed(
          call,
          "APPROVAL_REQUIRED",
          `(tool failed: '${call.name}' needs an approval before it runs)`,
        );
      }
    }
    return executor(call, context);
  };
}
