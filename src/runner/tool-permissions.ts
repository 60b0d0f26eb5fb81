import type { ToolManifestEntry } from "../contract/execution-contract.js";
import type { ToolCallExecutor } from "../session/session-dependencies.js";
import { type IdempotencyClass, idempotencyClassOf } from "./guard-tool-calls.js";
import { refusedToolResult } from "./refused-tool-result.js";

/**
 * The classes a caller's permission to call tools is given in (seed 004 retry safety, from the tool's side): what
 * a call may do. They are the idempotency classes under the names a server's roles use: a tool whose effect is not
 * known to be repeatable is a `write`, a destructive one a `delete`.
 */
export const toolPermissionClasses = ["read_only", "idempotent", "write", "delete"] as const;
export type ToolPermissionClass = (typeof toolPermissionClasses)[number];

const permissionClassOfIdempotency: Readonly<Record<IdempotencyClass, ToolPermissionClass>> = {
  read_only: "read_only",
  idempotent: "idempotent",
  unknown: "write",
  destructive: "delete",
};

/** The permission class of a tool, from the idempotency class it runs under (annotations, then configuration). */
export function toolPermissionClassOf(
  tool: ToolManifestEntry | undefined,
  destructiveTools: ReadonlySet<string>,
): ToolPermissionClass {
  return permissionClassOfIdempotency[idempotencyClassOf(tool, destructiveTools)];
}

/**
 * What a run's caller may do with tools (a server run: the caller's role). Recorded with the run's invocation, so a
 * resumed run, whoever resumes it, calls tools under the permissions it started with.
 */
export interface RunToolPermissions {
  /** The classes the run may call; a call of any other class fails with TOOL_PERMISSION_DENIED, never running. */
  readonly allowedClasses: readonly ToolPermissionClass[];
  /**
   * False: the configuration's `approvedTools` are ignored, so that every call of a delete-class tool waits for a
   * decision given outside the run (a human's, through the server), whatever the configuration pre-approves.
   */
  readonly preApprovedToolsAllowed: boolean;
}

/**
 * Wraps the tool executor so that a call of a class the run may not call fails as data (`permission_error` for
 * the model, code TOOL_PERMISSION_DENIED) without running: the model sees it as any tool failure and can go on.
 * Charter's built-ins (`final_report`, `tool_output`) are the run's own, not tools of a server, and always allowed.
 */
export function restrictToolClasses(
  executor: ToolCallExecutor,
  options: {
    readonly manifest: readonly ToolManifestEntry[];
    readonly destructiveTools: readonly string[];
    readonly allowedClasses: readonly ToolPermissionClass[];
  },
): ToolCallExecutor {
  const byName = new Map(options.manifest.map((tool) => [tool.name, tool]));
  const destructive = new Set(options.destructiveTools);
  const allowed = new Set(options.allowedClasses);
  return async (call, context) => {
    const tool = byName.get(call.name);
    // An unknown tool is the pipeline's to refuse (TOOL_NOT_FOUND), as for any run.
    if (tool === undefined || tool.source.kind === "builtin") return executor(call, context);
    const permissionClass = toolPermissionClassOf(tool, destructive);
    if (allowed.has(permissionClass)) return executor(call, context);
    const content = `(tool failed: permission_error: this run may not call '${call.name}', a ${permissionClass} tool; it may call ${[...allowed].join(", ") || "no tools"})`;
    return refusedToolResult(call, "TOOL_PERMISSION_DENIED", content, tool.source);
  };
}
