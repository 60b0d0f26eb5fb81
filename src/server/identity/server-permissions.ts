import type { ServerRole } from "../execution/run-request.js";

export const serverRoles: readonly ServerRole[] = ["admin", "operator", "viewer"];

/** What a request may ask for: each route names the one it needs. */
export type ServerPermission =
  /** Read runs, their transcripts, events and pending approvals. */
  | "runs.read"
  /** Start runs. */
  | "runs.start"
  /** Cancel runs. */
  | "runs.cancel"
  /** Approve or deny a run's pending calls (a human's decision). */
  | "runs.approve"
  /** Read the tenant's statistics. */
  | "stats.read"
  /** Read and change the tenant's configuration (allowed agents, providers, provider keys). */
  | "tenant.configure"
  /** Make, list and revoke the tenant's API keys. */
  | "keys.manage";

/**
 * What each role may do within its tenant (no role reaches another tenant): a viewer reads runs, events and
 * statistics; an operator also starts, cancels and approves runs; an admin does everything, the tenant's
 * configuration and keys included.
 */
const permissionsOfRole: Readonly<Record<ServerRole, ReadonlySet<ServerPermission>>> = {
  viewer: new Set(["runs.read", "stats.read"]),
  operator: new Set(["runs.read", "stats.read", "runs.start", "runs.cancel", "runs.approve"]),
  admin: new Set([
    "runs.read",
    "stats.read",
    "runs.start",
    "runs.cancel",
    "runs.approve",
    "tenant.configure",
    "keys.manage",
  ]),
};

export function roleMayDo(role: ServerRole, permission: ServerPermission): boolean {
  return permissionsOfRole[role].has(permission);
}

export function isServerRole(value: unknown): value is ServerRole {
  return typeof value === "string" && (serverRoles as readonly string[]).includes(value);
}
