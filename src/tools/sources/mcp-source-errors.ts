import { CharterError } from "../../foundation/charter-error.js";
import type { ErrorCode } from "../../foundation/error-codes.js";
import type { McpFailure } from "./classify-mcp-failure.js";
import type { McpServerDefinition } from "./mcp-server-definition.js";

export type McpStartPhase = "start" | "list_tools";

/** The server's address for messages and details: without credentials, query or fragment, which may hold secrets. */
function publicAddress(definition: McpServerDefinition): Record<string, string> {
  if (definition.type === "stdio") return { command: definition.command };
  try {
    const url = new URL(definition.url);
    return { url: `${url.origin}${url.pathname}` };
  } catch {
    return {};
  }
}

function factsOf(failure: McpFailure): Record<string, unknown> {
  return {
    kind: failure.kind,
    ...(failure.httpStatus === undefined ? {} : { httpStatus: failure.httpStatus }),
    ...(failure.systemCode === undefined ? {} : { systemCode: failure.systemCode }),
    ...(failure.exitCode === undefined ? {} : { exitCode: failure.exitCode }),
    ...(failure.signal === undefined ? {} : { signal: failure.signal }),
  };
}

/** MCP_SERVER_FAILED for a server that could not be started or could not list its tools. */
export function mcpStartFailure(
  server: string,
  definition: McpServerDefinition,
  failure: McpFailure,
  round: { readonly phase: McpStartPhase; readonly attempts: number; readonly stderrTail: string },
): CharterError {
  const what = round.phase === "start" ? "failed to start" : "failed to list its tools";
  const tries = round.attempts > 1 ? ` (after ${round.attempts} attempts)` : "";
  return new CharterError("MCP_SERVER_FAILED", `MCP server '${server}' ${what}: ${failure.reason}${tries}`, {
    details: {
      server,
      type: definition.type,
      phase: round.phase,
      reason: failure.reason,
      attempts: round.attempts,
      ...publicAddress(definition),
      ...factsOf(failure),
      ...(round.stderrTail === "" ? {} : { stderrTail: round.stderrTail }),
    },
  });
}

/** MCP_SERVER_FAILED for a server whose tools turned out empty once listed and filtered. */
export function mcpNoToolsFailure(
  server: string,
  definition: McpServerDefinition,
  listed: readonly string[],
): CharterError {
  const reason =
    listed.length === 0
      ? "the server lists no tools"
      : `none of its ${listed.length} tools passes toolsAllowed/toolsDenied`;
  return new CharterError("MCP_SERVER_FAILED", `MCP server '${server}' offers no usable tools: ${reason}`, {
    details: {
      server,
      type: definition.type,
      phase: "list_tools",
      reason,
      kind: "protocol",
      ...publicAddress(definition),
      listed: listed.slice(0, 50),
      toolsAllowed: definition.toolsAllowed ?? null,
      toolsDenied: definition.toolsDenied ?? null,
    },
  });
}

/**
 * The error a tool call throws when the server cannot serve it; the pipeline turns it into a failed result
 * carrying `code`, so the model reads the reason and the run goes on.
 */
export function mcpCallFailure(
  server: string,
  definition: McpServerDefinition,
  failure: McpFailure,
  situation: "unavailable" | "not_running" | "lost_in_flight" | "request_failed",
  code: ErrorCode = "MCP_SERVER_FAILED",
): CharterError {
  const message =
    situation === "not_running"
      ? `MCP server '${server}' is not running (${failure.reason})`
      : situation === "unavailable"
        ? `MCP server '${server}' is unavailable: ${failure.reason}`
        : situation === "lost_in_flight"
          ? `MCP server '${server}': ${failure.reason}; the call may or may not have run`
          : `MCP server '${server}': ${failure.reason}`;
  return new CharterError(code, message, {
    isRetryable: failure.retryable,
    details: { server, type: definition.type, situation, reason: failure.reason, ...factsOf(failure) },
  });
}
