import type { RunToolPermissions, ToolPermissionClass } from "../../runner/tool-permissions.js";
import type { ServerRole } from "./run-request.js";

/**
 * Which tool classes the runs of each role may call, unless the server is told otherwise. `admin` and `operator`
 * start runs and may call any class (a delete-class call still waits for a human's decision); a `viewer` starts no
 * runs, and a run continued on its behalf would only read.
 */
export const defaultRoleToolClasses: Readonly<Record<ServerRole, readonly ToolPermissionClass[]>> = {
  admin: ["read_only", "idempotent", "write", "delete"],
  operator: ["read_only", "idempotent", "write", "delete"],
  viewer: ["read_only"],
};

/**
 * What a server run of `role` may do with tools, whatever it runs (an agent, a workflow's agent steps, a work
 * item's agent): the role's classes, and never the configuration's `approvedTools`, so that a delete-class call
 * always waits for a human's decision.
 */
export function serverToolPermissions(
  role: ServerRole,
  roleToolClasses?: (role: ServerRole) => readonly ToolPermissionClass[],
): RunToolPermissions {
  return {
    allowedClasses: (roleToolClasses ?? ((named: ServerRole) => defaultRoleToolClasses[named]))(role),
    preApprovedToolsAllowed: false,
  };
}
