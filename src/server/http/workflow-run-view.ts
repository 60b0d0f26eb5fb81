import { isRunAbandoned } from "../../runner/run-owner.js";
import { type RunRequestRecord, settledRunEventTypes } from "../../store/run-event-records.js";
import type { RunRecord } from "../../store/run-record.js";
import type { RunStore } from "../../store/run-store.js";
import { readStoredWorkflow } from "../../workflow/read-stored-workflow.js";
import { readWorkflowContract } from "../../workflow/workflow-contract.js";
import type { WorkflowDefinition, WorkflowStep } from "../../workflow/workflow-definition.js";
import { stepStatuses, workflowStatuses } from "../../workflow/workflow-status.js";
import { pendingApprovalsOf } from "../execution/pending-approvals-of.js";
import { serverPendingApprovalsSchema } from "./pending-approvals-schema.js";
import { requestFields } from "./run-view.js";

/** What the server keeps of a workflow run it accepted: the request's own fields (see WorkflowRunRequest). */
interface AcceptedWorkflow {
  readonly workflow?: string;
  readonly input?: unknown;
  readonly correlationId?: string;
}

/** How each step is declared: its action and its dependencies (the DAG's edges). */
function stepDeclaration(step: WorkflowStep) {
  return {
    kind: step.action.kind,
    agent: step.action.kind === "agent" ? step.action.agent : null,
    tool: step.action.kind === "tool" ? step.action.name : null,
    dependsOn: [...step.dependsOn],
  };
}

/**
 * A workflow run as `GET /v1/workflows/runs/:id` (and each item of the list) shows it: where the workflow stands,
 * each step with its declaration, status and agent run, the errors and output, and, for a run the server accepted,
 * who asked. A run accepted and not started yet has its request only (`queued`, no steps).
 */
export async function workflowRunView(
  store: RunStore,
  run: RunRecord | null,
  accepted: RunRequestRecord | null,
  now: number,
) {
  if (run === null) return queuedWorkflowView(accepted as RunRequestRecord);
  const { definition } = readWorkflowContract(run.contract, run.runId);
  const checkpoint = await store.latestCheckpoint(run.runId);
  const common = {
    ...requestFields(accepted),
    runId: run.runId,
    workflowId: definition.id,
    correlationId: run.correlationId,
    createdAt: new Date(run.createdAt).toISOString(),
    updatedAt: new Date(run.updatedAt).toISOString(),
    finishedAt: run.finishedAt === null ? null : new Date(run.finishedAt).toISOString(),
  };
  if (checkpoint === null) return notStartedView(definition, run, common, now);
  const stored = await readStoredWorkflow(store, run.runId, now);
  const declared = new Map(definition.steps.map((step) => [step.id, stepDeclaration(step)]));
  const context = (checkpoint.document as { context?: { input?: unknown } }).context;
  // Stopped (stored `interrupted`) because steps' runs wait for a person: the server's lifecycle says so.
  const awaiting = stored.status === "interrupted" && accepted?.state === "AWAITING_APPROVAL";
  return {
    ...common,
    status: awaiting ? ("awaiting_approval" as const) : stored.status,
    ...(awaiting
      ? { pendingApprovals: await pendingApprovalsOf(store, { runId: run.runId, kind: "workflow" }) }
      : {}),
    input: context?.input ?? null,
    steps: stored.steps.map((step) => ({ ...step, ...declared.get(step.id) })),
    errors: stored.errors,
    output: stored.output,
    accounting: stored.accounting,
    chain: { head: stored.headHash, entries: stored.entries },
  };
}

/** A workflow run stored a moment before its first checkpoint: every step still pending. */
function notStartedView(
  definition: WorkflowDefinition,
  run: RunRecord,
  common: Record<string, unknown>,
  now: number,
) {
  const status = run.status === "running" ? (isRunAbandoned(run, now) ? "abandoned" : "running") : "failed";
  return {
    ...common,
    status,
    input: null,
    steps: definition.steps.map((step) => ({
      id: step.id,
      ...stepDeclaration(step),
      status: "pending" as const,
      runId: null,
      outcome: null,
      report: null,
      durationMs: null,
    })),
    errors: [],
    output: null,
    accounting: { turns: 0, tokens: { input: 0, output: 0 }, costUsd: 0 },
    chain: { head: run.headHash, entries: run.entryCount },
  };
}

/** A workflow run the server accepted that no worker has started yet. */
function queuedWorkflowView(request: RunRequestRecord) {
  const asked = request.request as AcceptedWorkflow;
  return {
    ...requestFields(request),
    runId: request.runId,
    workflowId: asked.workflow ?? "",
    correlationId: asked.correlationId ?? null,
    createdAt: new Date(request.createdAt).toISOString(),
    updatedAt: new Date(request.updatedAt).toISOString(),
    finishedAt: null,
    // Taken by a worker that has not stored the workflow run yet: running, as GET /v1/runs reads it.
    status:
      request.state === "REQUESTED" || settledRunEventTypes.includes(request.state)
        ? ("queued" as const)
        : ("running" as const),
    input: (asked.input ?? null) as unknown,
    steps: [],
    errors: [],
    output: null,
    accounting: { turns: 0, tokens: { input: 0, output: 0 }, costUsd: 0 },
    chain: { head: "", entries: 0 },
  };
}

/** The JSON schema of `workflowRunView` (the OpenAPI document's `WorkflowRun`). */
export const workflowRunSchema = {
  $id: "WorkflowRun",
  type: "object",
  required: ["runId", "workflowId", "status", "createdAt", "steps", "errors", "accounting", "chain"],
  properties: {
    runId: { type: "string", description: "The workflow run's id (a run of kind `workflow`)." },
    workflowId: { type: "string" },
    status: {
      type: "string",
      enum: ["queued", "running", "abandoned", "awaiting_approval", ...workflowStatuses],
      description:
        "queued: accepted, not started by a worker yet; running; abandoned: its process is gone (a worker continues it); awaiting_approval: steps' runs wait on a person's decision (pendingApprovals); then how it ended.",
    },
    pendingApprovals: serverPendingApprovalsSchema,
    lifecycle: {
      type: "string",
      enum: ["REQUESTED", "ROUTED", "EXECUTING", "TOOL_CALL", "AWAITING_APPROVAL", "COMPLETED", "FAILED"],
      description: "The latest lifecycle event (a workflow run the server accepted).",
    },
    requestId: { type: ["string", "null"] },
    userId: { type: ["string", "null"] },
    conversationId: { type: ["string", "null"] },
    metadata: { type: "object", additionalProperties: true },
    correlationId: { type: ["string", "null"] },
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
    finishedAt: { type: ["string", "null"], format: "date-time" },
    input: { description: "The workflow's input." },
    steps: {
      type: "array",
      description: "In the order of the workflow file.",
      items: {
        type: "object",
        required: ["id", "kind", "dependsOn", "status", "runId"],
        properties: {
          id: { type: "string" },
          kind: { type: "string", enum: ["agent", "tool"] },
          agent: { type: ["string", "null"], description: "An agent step's agent." },
          tool: { type: ["string", "null"], description: "A tool step's tool." },
          dependsOn: {
            type: "array",
            items: { type: "string" },
            description: "The steps it waits for: the edges of the workflow's graph.",
          },
          status: { type: "string", enum: [...stepStatuses] },
          runId: {
            type: ["string", "null"],
            description: "The agent run the step started (GET /v1/runs/:id); null for a tool step.",
          },
          outcome: { type: ["string", "null"] },
          report: { type: ["string", "null"] },
          durationMs: { type: ["integer", "null"] },
        },
      },
    },
    errors: {
      type: "array",
      items: {
        type: "object",
        required: ["stepId", "phase", "code", "message"],
        properties: {
          stepId: { type: ["string", "null"] },
          phase: { type: "string", enum: ["step", "compensation", "output"] },
          code: { type: "string" },
          message: { type: "string" },
        },
      },
    },
    output: { description: "The workflow's output once every step completed; else null." },
    accounting: {
      type: "object",
      required: ["turns", "tokens", "costUsd"],
      properties: {
        turns: { type: "integer" },
        tokens: {
          type: "object",
          required: ["input", "output"],
          properties: { input: { type: "integer" }, output: { type: "integer" } },
        },
        costUsd: { type: "number" },
      },
    },
    chain: {
      type: "object",
      required: ["head", "entries"],
      properties: { head: { type: "string" }, entries: { type: "integer" } },
    },
  },
} as const;
