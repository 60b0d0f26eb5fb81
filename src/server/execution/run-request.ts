import type { TraceContext } from "../telemetry/trace-context.js";

/** The roles of the server (seed 004 permission_error): what a caller may do within its tenant. */
export type ServerRole = "admin" | "operator" | "viewer";

/**
 * One run as the HTTP API accepted it (lifecycle REQUESTED). It carries everything a worker on another machine
 * needs to execute the run under the caller's identity: it is what is queued, so it is plain JSON.
 */
export interface RunRequest {
  /** The run id, assigned at REQUESTED: the seed's task_id. */
  readonly runId: string;
  readonly requestId: string;
  readonly tenantId: string;
  readonly userId: string | null;
  readonly role: ServerRole;
  /** From the caller's `x-correlation-id` header, or generated; sent on to providers, REST tools and MCP servers. */
  readonly correlationId: string;
  readonly conversationId: string | null;
  /** An agent registry id, or `auto` for selection. */
  readonly agent: string;
  readonly prompt: string | null;
  readonly input: unknown;
  readonly metadata: Readonly<Record<string, unknown>>;
  /**
   * Earlier messages of the exchange the caller sent with the request (the chat completions route: every message
   * before the last user message), after the conversation's own history; absent for `POST /v1/runs`.
   */
  readonly messages?: readonly { readonly role: "user" | "assistant"; readonly content: string }[];
  /** Milliseconds since the epoch, from the server's clock. */
  readonly requestedAt: number;
  /**
   * The caller's W3C trace context (`traceparent`, `tracestate` headers), when it sent a valid one: the run's
   * telemetry spans join the caller's trace, whichever worker executes or continues the run.
   */
  readonly traceContext?: TraceContext;
}

/** A human's decisions on a stopped run's pending calls (POST /v1/runs/:id/approvals), and who gave them. */
export interface RunDecisionRequest {
  readonly runId: string;
  readonly requestId: string;
  readonly tenantId: string;
  readonly userId: string | null;
  readonly role: ServerRole;
  readonly correlationId: string;
  readonly approve: readonly string[];
  readonly deny: readonly string[];
}
