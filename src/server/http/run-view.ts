import type { PendingApproval } from "../../session/pending-approval.js";
import type { RunRequestRecord, StoredRunEvent } from "../../store/run-event-records.js";
import type { RunSummary } from "../../store/run-record.js";
import type { RunRequest } from "../execution/run-request.js";

/**
 * A run as the API shows it (`GET /v1/runs/:id`, each item of `GET /v1/runs`, the answer of `wait: true`); with its
 * request (one the server accepted), who asked and where its lifecycle stands.
 */
export function runView(
  run: RunSummary,
  pendingApprovals: readonly PendingApproval[] | null = null,
  request: RunRequestRecord | null = null,
) {
  return {
    ...requestFields(request),
    runId: run.runId,
    kind: run.kind,
    agent: run.agentId,
    status: run.status,
    statusReason: run.statusReason,
    outcome: run.outcome,
    errorCode: run.errorCode,
    correlationId: run.correlationId,
    parentRunId: run.parentRunId,
    createdAt: new Date(run.createdAt).toISOString(),
    updatedAt: new Date(run.updatedAt).toISOString(),
    finishedAt: run.finishedAt === null ? null : new Date(run.finishedAt).toISOString(),
    turns: run.totals.turns,
    tokens: { input: run.totals.tokensIn, output: run.totals.tokensOut },
    costUsd: run.totals.costUsd,
    toolsUsed: [...run.totals.toolsUsed],
    finalReport: run.finalReport ?? null,
    chain: { head: run.headHash, entries: run.entryCount },
    ...(pendingApprovals !== null ? { pendingApprovals } : {}),
  };
}

/** A run the server accepted that no worker has started yet: its request only. */
export function queuedRunView(request: RunRequestRecord, ended: StoredRunEvent | null = null) {
  const asked = request.request as Partial<RunRequest>;
  const at = new Date(request.createdAt).toISOString();
  // A run whose lifecycle ended before any worker started it (cancelled while queued, refused before it ran):
  // its end event says how.
  const data = (ended?.data ?? {}) as {
    readonly cancelled?: boolean;
    readonly outcome?: string;
    readonly error?: { readonly code?: string } | null;
  };
  // Not ended: waiting for a worker (REQUESTED), or taken by one that has not stored the run yet (ROUTED...).
  const status =
    ended === null
      ? request.state === "REQUESTED"
        ? ("queued" as const)
        : ("running" as const)
      : data.cancelled === true
        ? ("interrupted" as const)
        : ended.type === "COMPLETED"
          ? ("completed" as const)
          : ("failed" as const);
  return {
    ...requestFields(request),
    runId: request.runId,
    // A work item's run is its agent's run; a workflow run is a run of kind workflow once it starts.
    kind: asked.kind === "workflow" ? ("workflow" as const) : ("agent" as const),
    agent: asked.agent ?? "",
    status,
    statusReason: null,
    outcome: ended === null ? null : (data.outcome ?? (data.cancelled === true ? "INTERRUPTED" : null)),
    errorCode: data.error?.code ?? null,
    correlationId: asked.correlationId ?? null,
    parentRunId: null,
    createdAt: at,
    updatedAt: new Date(request.updatedAt).toISOString(),
    finishedAt: ended === null ? null : new Date(ended.createdAt).toISOString(),
    turns: 0,
    tokens: { input: 0, output: 0 },
    costUsd: 0,
    toolsUsed: [],
    finalReport: null,
    chain: { head: "", entries: 0 },
  };
}

/** Who asked for a run the server accepted, and where its lifecycle stands (nothing for a run started elsewhere). */
export function requestFields(request: RunRequestRecord | null) {
  if (request === null) return {};
  const asked = request.request as Partial<RunRequest>;
  return {
    lifecycle: request.state,
    requestId: asked.requestId ?? null,
    userId: asked.userId ?? null,
    conversationId: request.conversationId,
    metadata: asked.metadata ?? {},
  };
}

/** The JSON schema of `runView` (the OpenAPI document's `Run`). */
export const runSchema = {
  $id: "Run",
  type: "object",
  required: ["runId", "kind", "agent", "status", "createdAt", "turns", "tokens", "costUsd", "chain"],
  properties: {
    runId: { type: "string" },
    kind: { type: "string", enum: ["agent", "workflow"] },
    agent: { type: "string" },
    status: {
      type: "string",
      enum: ["queued", "running", "completed", "failed", "interrupted", "awaiting_approval"],
      description: "queued: accepted, not started by a worker yet.",
    },
    lifecycle: {
      type: "string",
      enum: ["REQUESTED", "ROUTED", "EXECUTING", "TOOL_CALL", "AWAITING_APPROVAL", "COMPLETED", "FAILED"],
      description: "The latest lifecycle event of a run the server accepted (on GET /v1/runs/:id).",
    },
    requestId: { type: ["string", "null"] },
    userId: { type: ["string", "null"] },
    conversationId: { type: ["string", "null"] },
    metadata: { type: "object", additionalProperties: true },
    statusReason: { type: ["string", "null"] },
    outcome: {
      type: ["string", "null"],
      description: "COMPLETED_WITH_TOOLS, FAILED_TIMEOUT...; null while running",
    },
    errorCode: { type: ["string", "null"] },
    correlationId: { type: ["string", "null"] },
    parentRunId: { type: ["string", "null"] },
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
    finishedAt: { type: ["string", "null"], format: "date-time" },
    turns: { type: "integer" },
    tokens: {
      type: "object",
      required: ["input", "output"],
      properties: { input: { type: "integer" }, output: { type: "integer" } },
    },
    costUsd: { type: "number" },
    toolsUsed: { type: "array", items: { type: "string" } },
    finalReport: { description: "The run's final report (null while running)." },
    chain: {
      type: "object",
      required: ["head", "entries"],
      properties: { head: { type: "string" }, entries: { type: "integer" } },
    },
    pendingApprovals: {
      type: "array",
      description: "The calls a run awaiting approval waits on (only on GET /v1/runs/:id).",
      items: {
        type: "object",
        required: ["turn", "callId", "tool", "arguments"],
        properties: {
          turn: { type: "integer" },
          callId: { type: "string" },
          tool: { type: "string" },
          arguments: {},
          question: { type: "object", additionalProperties: true },
        },
      },
    },
  },
} as const;
