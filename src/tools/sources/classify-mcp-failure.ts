import { SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describeError } from "../describe-error.js";
import type { McpFailureKind } from "../mcp-server-health.js";
import type { McpSession } from "./mcp-session.js";
import { McpHttpFailure } from "./observed-fetch.js";
import { systemCodeOf } from "./system-code-of.js";

/** A failure of an exchange with an MCP server, classified from structured facts only. */
export interface McpFailure {
  readonly kind: McpFailureKind;
  /** For people; never branch on it. */
  readonly reason: string;
  /** Whether connecting again (a new session) may succeed. */
  readonly retryable: boolean;
  /** Whether the request reached the server: `no` makes repeating it safe. */
  readonly delivered: "no" | "unknown" | "yes";
  readonly httpStatus?: number;
  readonly systemCode?: string;
  readonly exitCode?: number;
  readonly signal?: string;
}

/** The failure of a source that was closed: nothing more is attempted. */
export const mcpClosedFailure: McpFailure = Object.freeze({
  kind: "closed",
  reason: "the source was closed",
  retryable: false,
  delivered: "no",
});

function retryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

function fromStatus(status: number, reason: string): McpFailure {
  // -1 is the SDK's "unexpected content type": the server answered with something that is not MCP.
  if (status < 100) return { kind: "protocol", reason, retryable: false, delivered: "unknown" };
  return {
    kind: "http_status",
    reason,
    retryable: retryableStatus(status),
    delivered: "unknown",
    httpStatus: status,
  };
}

/**
 * Classifies what an SDK call rejected with. Facts come from the error's class and fields (HTTP status, system
 * code, MCP error code) and from the session (a stdio process's exit, a lost session), never from message text.
 */
export function classifyMcpFailure(error: unknown, session: McpSession | null): McpFailure {
  const exit = session?.stdio?.exit ?? null;
  if (exit !== null) {
    const how = exit.exitCode !== null ? `with code ${exit.exitCode}` : `on ${exit.signal}`;
    return {
      kind: "process_exited",
      reason: `the server process exited ${how}`,
      retryable: false,
      delivered: "unknown",
      ...(exit.exitCode !== null ? { exitCode: exit.exitCode } : {}),
      ...(exit.signal !== null ? { signal: exit.signal } : {}),
    };
  }
  if (error instanceof McpHttpFailure) {
    const facts = {
      ...(error.httpStatus === null ? {} : { httpStatus: error.httpStatus }),
      ...(error.systemCode === null ? {} : { systemCode: error.systemCode }),
    };
    switch (error.kind) {
      case "unreachable":
        return { kind: "unreachable", reason: error.message, retryable: true, delivered: "no", ...facts };
      case "session_expired":
        return {
          kind: "session_expired",
          reason: "the server no longer knows the session (HTTP 404)",
          retryable: true,
          delivered: "no",
          ...facts,
        };
      case "connection_lost":
        return {
          kind: "connection_lost",
          reason: error.message,
          retryable: true,
          delivered: "unknown",
          ...facts,
        };
      case "http_status":
        return { ...fromStatus(error.httpStatus ?? 0, error.message), ...facts };
    }
  }
  if (error instanceof StreamableHTTPError) return fromStatus(error.code ?? 0, describeError(error));
  if (error instanceof SseError) {
    if (error.code !== undefined) return fromStatus(error.code, describeError(error));
    // The event source hides why its request failed; the session's fetch kept it.
    const cause = session?.fetch?.lastStreamFailure ?? null;
    return cause !== null
      ? classifyMcpFailure(cause, null)
      : { kind: "connection_lost", reason: describeError(error), retryable: true, delivered: "unknown" };
  }
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) {
      return {
        kind: "timeout",
        reason: "the server did not answer in time",
        retryable: true,
        delivered: "unknown",
      };
    }
    if (error.code === ErrorCode.ConnectionClosed) {
      return {
        kind: "connection_lost",
        reason: "the connection was closed",
        retryable: true,
        delivered: "unknown",
      };
    }
    return { kind: "protocol", reason: describeError(error), retryable: false, delivered: "yes" };
  }
  if (session?.lost != null) {
    return session.lost.error === null
      ? {
          kind: "connection_lost",
          reason: "the connection was closed",
          retryable: true,
          delivered: "unknown",
        }
      : classifyMcpFailure(session.lost.error, null);
  }
  // A stdio command that cannot be spawned fails with a system error before any exit.
  const systemCode = systemCodeOf(error);
  if (session?.stdio != null && systemCode !== null) {
    return {
      kind: "unreachable",
      reason: describeError(error),
      retryable: false,
      delivered: "no",
      systemCode,
    };
  }
  return { kind: "protocol", reason: describeError(error), retryable: false, delivered: "unknown" };
}
