import type { FastifyReply, FastifyRequest } from "fastify";
import { CharterError } from "../../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { RunRequestRecord } from "../../store/run-event-records.js";
import type { RunStore } from "../../store/run-store.js";
import { pendingApprovalsOf } from "../execution/pending-approvals-of.js";
import type { RunDispatcher } from "../execution/run-dispatcher.js";
import type { RunRequestKind } from "../execution/run-request.js";
import { correlationIdOf } from "./correlation-id-of.js";
import { authenticatedErrors, errorReference } from "./error-schema.js";
import { identityOf } from "./request-identity.js";
import { runCallerFields } from "./run-caller-fields.js";
import { dispatcherOf } from "./start-server-run.js";

/** A person's decision on one call a workflow run or a work item run waits on. */
export interface ServerApprovalBody {
  readonly callId: string;
  readonly decision: "approve" | "deny";
  /** A workflow run: the step whose run waits on the call (needed only when two steps' runs wait on one call id). */
  readonly stepId?: string;
}

export const serverApprovalBody = {
  type: "object",
  additionalProperties: false,
  required: ["callId", "decision"],
  properties: {
    callId: { type: "string", minLength: 1, description: "A call of the run's pendingApprovals." },
    decision: { type: "string", enum: ["approve", "deny"] },
    stepId: {
      type: "string",
      minLength: 1,
      description:
        "The step whose run waits on the call: needed only when two steps wait on calls of one id.",
    },
  },
} as const;

/** The answers of the workflow and work item approval routes. */
export const serverApprovalResponses = {
  202: {
    type: "object",
    required: ["runId", "callId", "decision"],
    properties: {
      runId: { type: "string" },
      callId: { type: "string" },
      decision: { type: "string", enum: ["approve", "deny"] },
      stepId: { type: ["string", "null"], description: "The workflow step whose run waits on the call." },
    },
  },
  404: errorReference,
  409: errorReference,
  ...authenticatedErrors,
} as const;

/**
 * `POST /v1/workflows/runs/:id/approvals` and `POST /v1/work-items/runs/:id/approvals`: checks that the caller's
 * run (found by the route, tenant-scoped) waits on the call, then hands the decision to the dispatcher, which
 * queues it for a worker to continue the run with. As for an agent run, a call the run does not wait on (or a run
 * that waits on nothing) is 409 RUN_STATE_CONFLICT naming the calls it does wait on; the decision is always a
 * person's (only the route's caller gives it, never a model).
 */
export async function decideServerRunApproval(
  request: FastifyRequest<{ Body: ServerApprovalBody }>,
  reply: FastifyReply,
  options: {
    readonly store: RunStore;
    readonly dispatcher: RunDispatcher | undefined;
    readonly environment: RuntimeEnvironment;
  },
  run: {
    readonly runId: string;
    readonly kind: RunRequestKind;
    readonly accepted: RunRequestRecord | null;
    readonly status: string;
  },
): Promise<{ runId: string; callId: string; decision: "approve" | "deny"; stepId: string | null }> {
  const identity = identityOf(request);
  const { callId, decision, stepId } = request.body;
  const { runId, accepted } = run;
  const what = run.kind === "workflow" ? "workflow run" : "work item run";
  if (accepted?.state !== "AWAITING_APPROVAL") {
    throw new CharterError(
      "RUN_STATE_CONFLICT",
      `${what} ${runId} does not wait on any decision (it is ${run.status}${accepted === null ? "" : `, lifecycle ${accepted.state}`})`,
      {
        details: {
          runId,
          reason: "not_awaiting_approval",
          status: run.status,
          lifecycle: accepted?.state ?? null,
          callId,
          pendingCallIds: [],
        },
      },
    );
  }
  const pending = await pendingApprovalsOf(options.store.forTenant(identity.tenantId), {
    runId,
    kind: run.kind,
  });
  const matching = pending.filter(
    (call) => call.callId === callId && (stepId === undefined || call.stepId === stepId),
  );
  if (matching.length === 0) {
    throw new CharterError(
      "RUN_STATE_CONFLICT",
      `${what} ${runId} does not wait on a decision for call ${callId}${stepId === undefined ? "" : ` of step ${stepId}`}: it waits on ${pending.map((call) => call.callId).join(", ") || "nothing"}`,
      {
        details: {
          runId,
          reason: "call_not_pending",
          status: run.status,
          callId,
          ...(stepId !== undefined ? { stepId } : {}),
          pendingCallIds: pending.map((call) => call.callId),
        },
      },
    );
  }
  const steps = [...new Set(matching.map((call) => call.stepId))];
  if (steps.length > 1) {
    throw new CharterError(
      "REQUEST_INVALID",
      `steps ${steps.join(" and ")} of ${what} ${runId} both wait on a call ${callId}: name the step (stepId)`,
      { details: { runId, reason: "ambiguous_call_id", callId, steps, location: "body/stepId" } },
    );
  }
  const decidedStep = matching[0]?.stepId ?? null;
  const correlationId = correlationIdOf(request, reply, options.environment);
  await dispatcherOf(options.dispatcher).decide({
    ...runCallerFields(request, runId, correlationId),
    approve: decision === "approve" ? [callId] : [],
    deny: decision === "deny" ? [callId] : [],
    ...(decidedStep !== null ? { stepId: decidedStep } : {}),
  });
  return { runId, callId, decision, stepId: decidedStep };
}
