import type { ErrorCode } from "../foundation/error-codes.js";

/**
 * - `starting`: `start()` is connecting or listing tools.
 * - `healthy`: the last exchange with the server succeeded.
 * - `degraded`: the connection was lost or a request failed; the next call reconnects (or is reconnecting).
 * - `unavailable`: reconnection gave up, the stdio process exited, or the source was closed; calls fail at
 *   once (a remote server is tried again once `reconnect.maxDelay` has passed since the last attempt).
 */
export type McpServerHealthState = "starting" | "healthy" | "degraded" | "unavailable";

/**
 * What went wrong, as a stable fact rather than message text:
 * - `unreachable`: no connection could be made (refused, unknown host); the request was never delivered.
 * - `connection_lost`: the connection broke with a request in flight; whether it ran is unknown.
 * - `session_expired`: the server no longer knows the session (HTTP 404 with the session id).
 * - `http_status`: the server answered with another HTTP error status (`httpStatus`).
 * - `timeout`: the server did not answer within `requestTimeout`.
 * - `process_exited`: the stdio server process ended (`exitCode` or `signal`).
 * - `protocol`: the server answered, but not with what MCP requires (or with an MCP error).
 * - `closed`: the source was closed.
 */
export type McpFailureKind =
  | "unreachable"
  | "connection_lost"
  | "session_expired"
  | "http_status"
  | "timeout"
  | "process_exited"
  | "protocol"
  | "closed";

export interface McpServerError {
  readonly code: ErrorCode;
  readonly kind: McpFailureKind;
  /** For people; never branch on it. */
  readonly reason: string;
  /** Milliseconds since the epoch, from the runtime environment's clock. */
  readonly at: number;
  readonly httpStatus?: number;
  /** The system or network error code (`ECONNREFUSED`, `UND_ERR_SOCKET`, `ENOENT`...), when there was one. */
  readonly systemCode?: string;
  readonly exitCode?: number;
  readonly signal?: string;
}

/** The health of one MCP server, as its source last saw it. A plain frozen value: safe to log or send. */
export interface McpServerHealth {
  readonly server: string;
  readonly type: "stdio" | "http" | "sse";
  readonly state: McpServerHealthState;
  /** When the state last changed (milliseconds since the epoch). */
  readonly since: number;
  /** The most recent failure, kept after recovery; `null` if there was none. */
  readonly lastError: McpServerError | null;
  /** How many times a lost or expired session was replaced by a new one. */
  readonly reconnections: number;
}
