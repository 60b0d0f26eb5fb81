import type { ErrorCode } from "../foundation/error-codes.js";
import type { AIAgentResult } from "../session/agent-result.js";

/** CLI exit codes of seed 000 §4, chosen from typed error codes, never from message text. */
export const exitCodes = {
  success: 0,
  sessionFailure: 1,
  toolServerFailure: 3,
  invalidInput: 4,
  schemaValidation: 5,
  /** A work item whose change was not admitted (`charter work run`). */
  denied: 6,
} as const;

const invalidInputCodes: ReadonlySet<ErrorCode> = new Set([
  "ARGUMENT_INVALID",
  "AGENT_FILE_INVALID",
  "CONFIGURATION_INVALID",
  "ENVIRONMENT_VARIABLE_UNRESOLVED",
  "CONTRACT_INVALID",
  "WORKFLOW_FILE_INVALID",
  "WORKFLOW_INPUT_INVALID",
  "ABILITY_INVALID",
  "ABILITY_DUPLICATE",
  "ABILITY_UNKNOWN",
  "AGENT_PROFILE_INVALID",
  "AGENT_ID_DUPLICATE",
  "AGENT_NOT_FOUND",
  "AGENT_DISABLED",
  "WORK_ITEM_INVALID",
  "WORK_REPOSITORY_INVALID",
  "API_KEY_NOT_FOUND",
  "WORK_PLAN_INVALID",
  "WORK_PLAN_CYCLE",
  "WORK_TREE_NOT_CLEAN",
]);

// Seed 000 §4: 3 is "missing/failed MCP servers"; a `tools` entry that names nothing is a missing server or tool.
const toolServerCodes: ReadonlySet<ErrorCode> = new Set([
  "MCP_SERVER_FAILED",
  "TOOL_REFERENCE_UNKNOWN",
  "TOOL_REFERENCE_DENIED",
]);

export function exitCodeForError(code: ErrorCode): number {
  if (invalidInputCodes.has(code)) return exitCodes.invalidInput;
  if (toolServerCodes.has(code)) return exitCodes.toolServerFailure;
  if (code === "OUTPUT_SCHEMA_INVALID") return exitCodes.schemaValidation;
  return exitCodes.sessionFailure;
}

/** Never 0 when `success` is false (seed 000 §10 "wrong exit code"). */
export function exitCodeForResult(result: AIAgentResult): number {
  if (result.success) return exitCodes.success;
  return result.error === null ? exitCodes.sessionFailure : exitCodeForError(result.error.code);
}
