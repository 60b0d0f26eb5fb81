import type { TraceContext } from "../telemetry/trace-context.js";

/** The roles of the server (seed 004 permission_error): what a caller may do within its tenant. */
export type ServerRole = "admin" | "operator" | "viewer";

/** What a server run runs: an agent, a workflow (by name), or a work item on a repository (by name). */
export const runRequestKinds = ["agent", "workflow", "work-item"] as const;
export type RunRequestKind = (typeof runRequestKinds)[number];

/**
 * The stored request's format: 2 added `kind` (and the workflow and work item fields); a request without `v`
 * (format 1, stored before) is an agent run's.
 */
export const runRequestVersion = 2;

/**
 * One run as the HTTP API accepted it (lifecycle REQUESTED). It carries everything a worker on another machine
 * needs to execute the run under the caller's identity: it is what is queued, so it is plain JSON.
 */
export interface RunRequest {
  /** The format version (see runRequestVersion); absent in requests stored before version 2. */
  readonly v?: typeof runRequestVersion;
  /** Absent: `agent` (every request stored before version 2). */
  readonly kind?: RunRequestKind;
  /** A workflow run: the workflow's name in the server's `server.workflows` folder. */
  readonly workflow?: string;
  /** A work item run: the repository's name in the server's `server.repositories`. */
  readonly repository?: string;
  /** A work item run: the work item, as its file would hold it (checked against its schema when accepted). */
  readonly item?: unknown;
  /** The run id, assigned at REQUESTED: the seed's task_id. */
  readonly runId: string;
  readonly requestId: string;
  readonly tenantId: string;
  readonly userId: string | null;
  readonly role: ServerRole;
  /** From the caller's `x-correlation-id` header, or generated; sent on to providers, REST tools and MCP servers. */
  readonly correlationId: string;
  readonly conversationId: string | null;
  /**
   * An agent registry id, or `auto` for selection; for a workflow run the workflow's name, for a work item run
   * its item's agent.
   */
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
  /**
   * A workflow run: the step whose run waits on the calls, when the caller named it (the steps' runs are separate
   * runs, so two of them may wait on calls with the same id). Absent for agent and work item runs.
   */
  readonly stepId?: string;
}

/** What a request runs (`agent` for requests stored before kinds existed). */
export function runRequestKindOf(request: Pick<RunRequest, "kind">): RunRequestKind {
  return request.kind ?? "agent";
}
