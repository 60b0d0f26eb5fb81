import { resolve } from "node:path";
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import type { BudgetsConfiguration } from "../../config/server-configuration-schema.js";
import { CharterError } from "../../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { RunStatus } from "../../store/run-record.js";
import { runStatuses } from "../../store/run-record.js";
import type { RunStore } from "../../store/run-store.js";
import { loadWorkflowFile } from "../../workflow/load-workflow-file.js";
import { validateWorkflowInput } from "../../workflow/validate-workflow-input.js";
import type { WorkflowStep } from "../../workflow/workflow-definition.js";
import { findServerWorkflow } from "../execution/find-server-workflow.js";
import type { RunDispatcher } from "../execution/run-dispatcher.js";
import { runRequestVersion } from "../execution/run-request.js";
import type { TenantScopeViolations } from "../identity/tenant-scope-violations.js";
import type { TenantConfiguration } from "../tenants/tenant-configuration.js";
import { cancelResponses, cancelServerRun } from "./cancel-server-run.js";
import {
  decideServerRunApproval,
  type ServerApprovalBody,
  serverApprovalBody,
  serverApprovalResponses,
} from "./decide-server-run-approval.js";
import { authenticatedErrors, errorReference } from "./error-schema.js";
import { refuseRunOutsideTenant } from "./refuse-run-outside-tenant.js";
import { identityOf } from "./request-identity.js";
import { runIdParams } from "./run-id-params.js";
import { runListSchema } from "./run-list-schema.js";
import { runNotFound } from "./run-not-found.js";
import { startRunHeaders } from "./start-run-headers.js";
import { startRunResponses } from "./start-run-responses.js";
import { dispatcherOf, startServerRun, waitUntilSettled } from "./start-server-run.js";
import { storedRunListPage } from "./stored-run-list-page.js";
import { workflowRunSchema, workflowRunView } from "./workflow-run-view.js";

export interface WorkflowRunRoutesOptions {
  /** `server.budgets`: a tenant whose token or cost budget is spent starts no run (429); default none. */
  readonly budgets?: BudgetsConfiguration;
  readonly store: RunStore;
  readonly environment: RuntimeEnvironment;
  readonly violations: TenantScopeViolations;
  /** Where accepted runs go; without one, starting a workflow answers 500 (`no_dispatcher`). */
  readonly dispatcher?: RunDispatcher;
  /** `server.workflows`: the folder of the workflows callers may start by name (relative to the process's directory). */
  readonly workflowsDirectory?: string;
}

interface StartWorkflowBody {
  readonly workflow: string;
  readonly input?: unknown;
  readonly metadata?: Record<string, unknown>;
  readonly wait?: boolean;
}

const startWorkflowBody = {
  type: "object",
  additionalProperties: false,
  required: ["workflow"],
  properties: {
    workflow: {
      type: "string",
      pattern: "^[a-z0-9]+(?:-[a-z0-9]+)*$",
      maxLength: 200,
      description: "The workflow's name: `<name>.workflow.yaml` in the server's workflows folder.",
    },
    input: { description: "The workflow's input, checked against its `input` schema (default `{}`)." },
    metadata: {
      type: "object",
      additionalProperties: true,
      description: "Your own data, kept with the run.",
    },
    wait: {
      type: "boolean",
      default: false,
      description: "Answer with the finished workflow run instead of 202.",
    },
  },
} as const;

/**
 * Every agent a workflow's steps (and compensations) run must be one the tenant may run: a tenant limited to some
 * agents may start only workflows whose every agent step names one of them (by registry id).
 */
function checkWorkflowAgentsAllowed(steps: readonly WorkflowStep[], allowed: readonly string[] | null): void {
  if (allowed === null) return;
  for (const step of steps) {
    for (const action of [step.action, step.compensate]) {
      if (action?.kind !== "agent" || allowed.includes(action.agent)) continue;
      throw new CharterError(
        "PERMISSION_DENIED",
        `the tenant may not run the agent ${action.agent} of the workflow's step ${step.id}`,
        {
          details: {
            reason: "agent_not_allowed",
            agent: action.agent,
            step: step.id,
            allowedAgents: [...allowed],
          },
        },
      );
    }
  }
}

/** Whether a run request the server accepted asked for a workflow run. */
export function isWorkflowRequest(request: { readonly request: unknown } | null): boolean {
  return (request?.request as { kind?: unknown } | undefined)?.kind === "workflow";
}

/**
 * `/v1/workflows/runs`: the tenant's workflow runs (runs of kind `workflow`, whoever started them), and one of them
 * with its steps, their dependencies and their agent runs. Tenant-scoped as the run routes are: another tenant's
 * run is a 404 and a recorded violation.
 */
export const workflowRunRoutes: FastifyPluginAsync<WorkflowRunRoutesOptions> = async (app, options) => {
  const { store, environment, violations } = options;
  app.addSchema(workflowRunSchema);

  /** The caller's tenant's workflow run (row and request), or the same 404 whoever has it, recorded when another tenant does. */
  async function ownWorkflowRun(request: FastifyRequest, runId: string) {
    const tenantStore = store.forTenant(identityOf(request).tenantId);
    const [run, accepted] = await Promise.all([tenantStore.getRun(runId), tenantStore.getRunRequest(runId)]);
    if (run !== null && run.kind === "workflow") return { run, accepted };
    if (run === null && accepted !== null && isWorkflowRequest(accepted)) return { run, accepted };
    // The tenant's own run of another kind is simply not a workflow run; only another tenant's is a violation.
    if (run !== null || accepted !== null) throw runNotFound(runId, "workflow");
    return refuseRunOutsideTenant(request, store, violations, runId, "workflow");
  }

  app.post<{ Body: StartWorkflowBody }>(
    "/v1/workflows/runs",
    {
      config: { permission: "runs.start" },
      schema: {
        summary: "Start a workflow run",
        description:
          "202 with the run id once the workflow run is accepted (stored and queued), or with `wait: true` 200 with the workflow run once it has ended.",
        tags: ["workflows"],
        headers: startRunHeaders,
        body: startWorkflowBody,
        response: startRunResponses("WorkflowRun#"),
      },
    },
    async (request, reply) => {
      const identity = identityOf(request);
      const { wait = false, ...asked } = request.body;
      const directory =
        options.workflowsDirectory === undefined ? undefined : resolve(options.workflowsDirectory);
      const loaded = await loadWorkflowFile(await findServerWorkflow(directory, asked.workflow));
      validateWorkflowInput(loaded.definition, asked.input ?? {}, `workflow ${asked.workflow}`);
      const tenant = (await store.forTenant(identity.tenantId).getTenantConfiguration())?.configuration as
        | TenantConfiguration
        | undefined;
      checkWorkflowAgentsAllowed(loaded.definition.steps, tenant?.allowedAgents ?? null);
      const runId = await startServerRun(request, reply, options, asked, (accepted) => ({
        v: runRequestVersion,
        kind: "workflow",
        ...accepted,
        conversationId: null,
        agent: asked.workflow,
        workflow: asked.workflow,
        prompt: null,
        input: asked.input ?? {},
        metadata: asked.metadata ?? {},
      }));
      reply.header("location", `/v1/workflows/runs/${runId}`);
      if (!wait) return reply.status(202).send({ runId });
      await waitUntilSettled(reply, options.dispatcher, identity.tenantId, runId);
      const { run, accepted } = await ownWorkflowRun(request, runId);
      return reply
        .status(200)
        .send(await workflowRunView(store.forTenant(identity.tenantId), run, accepted, environment.now()));
    },
  );

  app.post<{ Params: { id: string } }>(
    "/v1/workflows/runs/:id/cancel",
    {
      config: { permission: "runs.cancel" },
      schema: {
        summary: "Ask a workflow run to stop at its next checkpoint (its running steps' runs stop too)",
        tags: ["workflows"],
        params: runIdParams,
        response: cancelResponses,
      },
    },
    async (request, reply) => {
      const { tenantId } = identityOf(request);
      const runId = request.params.id;
      const { run } = await ownWorkflowRun(request, runId);
      const answer = await cancelServerRun(
        dispatcherOf(options.dispatcher),
        tenantId,
        runId,
        "workflow run",
        () => run?.status ?? "queued",
      );
      return reply.status(202).send(answer);
    },
  );

  app.post<{ Params: { id: string }; Body: ServerApprovalBody }>(
    "/v1/workflows/runs/:id/approvals",
    {
      config: { permission: "runs.approve" },
      schema: {
        summary: "A person's decision on a call a workflow step's run waits on",
        description:
          "The workflow continues with the decision (an approved call runs once, a denied one is a tool failure the step's model sees); a destructive call never runs on a model's own say-so.",
        tags: ["workflows"],
        params: runIdParams,
        body: serverApprovalBody,
        response: serverApprovalResponses,
      },
    },
    async (request, reply) => {
      const runId = request.params.id;
      const { run, accepted } = await ownWorkflowRun(request, runId);
      const answer = await decideServerRunApproval(
        request,
        reply,
        { store, dispatcher: options.dispatcher, environment },
        { runId, kind: "workflow", accepted, status: run?.status ?? "queued" },
      );
      return reply.status(202).send(answer);
    },
  );

  app.get<{ Querystring: { status?: RunStatus | "queued"; limit: number; cursor?: string } }>(
    "/v1/workflows/runs",
    {
      config: { permission: "runs.read" },
      schema: runListSchema({
        summary:
          "The tenant's workflow runs, newest first: the workflow runs waiting for a worker (status queued) lead the first page",
        tags: ["workflows"],
        itemsKey: "workflowRuns",
        view: "WorkflowRun#",
        status: {
          type: "string",
          enum: [...runStatuses, "queued"],
          description:
            "The workflow run's status (queued: not started yet; awaiting_approval: steps wait on a person's decision; interrupted: stopped otherwise). A page filtered by awaiting_approval or interrupted may hold fewer than limit runs; follow nextCursor.",
        },
        limit: { maximum: 100, default: 20 },
      }),
    },
    async (request) => {
      const tenantStore = store.forTenant(identityOf(request).tenantId);
      const now = environment.now();
      // A workflow run waiting for a person is stored `interrupted` (the engine's own record, which `charter
      // workflow` reads too); the server's lifecycle tells the two apart. So both filters read the stored
      // `interrupted` runs and keep those whose view says what was asked: such a page may hold fewer than `limit`
      // runs, and its cursor still goes on from the stored runs it read.
      const asked = request.query.status;
      const storedStatus = asked === "awaiting_approval" ? "interrupted" : asked;
      // As GET /v1/runs: the workflow runs not stored yet lead the first page, the cursor counts stored ones only.
      const page = await storedRunListPage(
        tenantStore,
        { ...request.query, ...(storedStatus !== undefined ? { status: storedStatus } : {}) },
        { kind: "workflow" },
        {
          accepts: isWorkflowRequest,
          view: (accepted) => workflowRunView(tenantStore, null, accepted, now),
        },
      );
      const workflowRuns = [...page.leading];
      for (const summary of page.stored) {
        const [run, accepted] = await Promise.all([
          tenantStore.getRun(summary.runId),
          tenantStore.getRunRequest(summary.runId),
        ]);
        const view = await workflowRunView(tenantStore, run, accepted, now);
        if (storedStatus === "interrupted" && view.status !== asked) continue;
        workflowRuns.push(view);
      }
      return { workflowRuns, nextCursor: page.nextCursor };
    },
  );

  app.get<{ Params: { id: string } }>(
    "/v1/workflows/runs/:id",
    {
      config: { permission: "runs.read" },
      schema: {
        summary: "One workflow run: its status, each step (dependencies, status, agent run) and its result",
        tags: ["workflows"],
        params: runIdParams,
        response: { 200: { $ref: "WorkflowRun#" }, 404: errorReference, ...authenticatedErrors },
      },
    },
    async (request) => {
      const { run, accepted } = await ownWorkflowRun(request, request.params.id);
      return workflowRunView(store.forTenant(identityOf(request).tenantId), run, accepted, environment.now());
    },
  );
};
