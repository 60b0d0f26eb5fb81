import type { ErrorCode } from "../foundation/error-codes.js";

/**
 * The failure classes of a multi-tenant service (seed 004 "Failure Classification"), plus `internal_error` for a
 * fault of Charter itself (a bug, an unreachable store), which the seed's classes do not describe and which no
 * caller should read as its own mistake or a provider's.
 */
export const failureClasses = [
  "provider_error",
  "tool_error",
  "validation_error",
  "timeout",
  "tenant_scope_violation",
  "auth_error",
  "rate_limit_exceeded",
  "permission_error",
  "internal_error",
] as const;

export type FailureClass = (typeof failureClasses)[number];

const classByCode: Partial<Record<ErrorCode, FailureClass>> = {
  AUTH_INVALID: "auth_error",
  MODEL_AUTHENTICATION_FAILED: "provider_error",
  PERMISSION_DENIED: "permission_error",
  TOOL_NOT_ALLOWED: "permission_error",
  TOOL_PERMISSION_DENIED: "permission_error",
  TOOL_CALL_DENIED: "permission_error",
  CLIENT_BLOCKED: "tenant_scope_violation",
  MODEL_RATE_LIMITED: "rate_limit_exceeded",
  RATE_LIMIT_EXCEEDED: "rate_limit_exceeded",
  TENANT_BUDGET_EXHAUSTED: "rate_limit_exceeded",
  MODEL_QUOTA_EXCEEDED: "provider_error",
  MODEL_TIMEOUT: "timeout",
  TIMEOUT: "timeout",
  TOOL_TIMEOUT: "timeout",
  INTERNAL_ERROR: "internal_error",
};

/**
 * The failure class of an error code: a model's failures are `provider_error`, a tool's `tool_error`, what the
 * caller sent (or named, and does not exist) `validation_error`, each timeout `timeout`; the few codes that name
 * their class outright are listed above.
 */
export function failureClassOf(code: ErrorCode): FailureClass {
  const listed = classByCode[code];
  if (listed !== undefined) return listed;
  if (code.startsWith("MODEL_") || code.startsWith("PROTOCOL_")) return "provider_error";
  if (code.startsWith("TOOL_") || code.startsWith("MCP_") || code === "WORKSPACE_PATH_REFUSED")
    return "tool_error";
  return "validation_error";
}
