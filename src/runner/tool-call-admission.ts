import type { ToolManifestEntry } from "../contract/execution-contract.js";
import type { ErrorCode } from "../foundation/error-codes.js";
import type { ToolCallExecutor } from "../session/session-dependencies.js";
import { refusedToolResult } from "./refused-tool-result.js";
import { type ToolPermissionClass, toolPermissionClassOf } from "./tool-permissions.js";

/** Why a tool call may not run now (a server's tool-call rate limit), and when it may be tried again. */
export interface ToolCallRefusal {
  readonly code: ErrorCode;
  /** The failure class the model is told (`rate_limit_exceeded`). */
  readonly failureClass: string;
  readonly message: string;
  /** Whole seconds until the call may be tried again. */
  readonly retryAfterSeconds: number;
}

/**
 * Asked before each tool call of a run that is about to execute (after its permission and approval checks): null
 * lets it run, a refusal makes it a tool failure the model sees. Given by the caller of the run (a server: its
 * tool-call rate limits); not recorded with the run, so a resume is given it again.
 */
export type ToolCallAdmission = (call: {
  readonly tool: string;
  readonly permissionClass: ToolPermissionClass;
}) => Promise<ToolCallRefusal | null>;

/**
 * Wraps the tool executor so that a call the admission refuses fails as data, without running: the model reads
 * `(tool failed: rate_limit_exceeded: ...; retryAfter: 42)` and may wait, do something else or stop. Charter's
 * built-ins are the run's own and always admitted.
 */
export function admitToolCalls(
  executor: ToolCallExecutor,
  options: {
    readonly manifest: readonly ToolManifestEntry[];
    readonly destructiveTools: readonly string[];
    readonly admission: ToolCallAdmission;
  },
): ToolCallExecutor {
  const byName = new Map(options.manifest.map((tool) => [tool.name, tool]));
  const destructive = new Set(options.destructiveTools);
  return async (call, context) => {
    const tool = byName.get(call.name);
    if (tool === undefined || tool.source.kind === "builtin") return executor(call, context);
    const permissionClass = toolPermissionClassOf(tool, destructive);
    let refusal: ToolCallRefusal | null;
    try {
      refusal = await options.admission({ tool: call.name, permissionClass });
    } catch {
      // The counters could not be read (the store is unreachable): the call does not run unmetered, and the
      // model is told as of any failure.
      refusal = {
        code: "INTERNAL_ERROR",
        failureClass: "internal_error",
        message: `the call of '${call.name}' could not be checked against the rate limits`,
        retryAfterSeconds: 1,
      };
    }
    if (refusal === null) return executor(call, context);
    const content = `(tool failed: ${refusal.failureClass}: ${refusal.message}; retryAfter: ${refusal.retryAfterSeconds})`;
    return refusedToolResult(call, refusal.code, content, tool.source);
  };
}
