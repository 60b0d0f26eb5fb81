import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { CharterError } from "../../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { RunStatus } from "../../store/run-record.js";
import { runStatuses } from "../../store/run-record.js";
import type { RunStore } from "../../store/run-store.js";
import type { TenantScopeViolations } from "../identity/tenant-scope-violations.js";
import { authenticatedErrors, errorReference } from "./error-schema.js";
import { decodeCursor, encodeCursor } from "./list-cursor.js";
import { refuseOutsideTenant } from "./refuse-outside-tenant.js";
import { identityOf } from "./request-identity.js";
import { workflowRunSchema, workflowRunView } from "./workflow-run-view.js";

export interface WorkflowRunRoutesOptions {
  readonly store: RunStore;
  readonly environment: RuntimeEnvironment;
  readonly violations: TenantScopeViolations;
}

export const workflowRunIdParams = {
  type: "object",
  required: ["id"],
  properties: { id: { type: "string", minLength: 1, maxLength: 200 } },
} as const;

function workflowRunNotFound(runId: string): CharterError {
  return new CharterError("RUN_NOT_FOUND", `no workflow run ${runId}`, {
    details: { runId, kind: "workflow" },
  });
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
    if (run !== null || accepted !== null) throw workflowRunNotFound(runId);
    const owner = await store.findRunTenant(runId);
    return refuseOutsideTenant(
      request,
      violations,
      owner?.tenantId,
      { kind: "workflow_run", id: runId },
      workflowRunNotFound(runId),
    );
  }

  app.get<{ Querystring: { status?: RunStatus; limit: number; cursor?: string } }>(
    "/v1/workflows/runs",
    {
      config: { permission: "runs.read" },
      schema: {
        summary: "The tenant's workflow runs, newest first",
        tags: ["workflows"],
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: {
            status: {
              type: "string",
              enum: [...runStatuses],
              description: "The workflow run's stored status, as GET /v1/runs filters it.",
            },
            limit: { type: "integer", minimum: 1, maximum: 100, default: 20 },
            cursor: { type: "string", minLength: 1, description: "nextCursor of the previous page." },
          },
        },
        response: {
          200: {
            type: "object",
            required: ["workflowRuns", "nextCursor"],
            properties: {
              workflowRuns: { type: "array", items: { $ref: "WorkflowRun#" } },
              nextCursor: { type: ["string", "null"] },
            },
          },
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const tenantStore = store.forTenant(identityOf(request).tenantId);
      const { status, limit, cursor } = request.query;
      const offset = cursor === undefined ? 0 : decodeCursor(cursor);
      // One more than asked for: whether there is a next page.
      const summaries = await tenantStore.listRuns({
        kind: "workflow",
        limit: limit + 1,
        offset,
        ...(status !== undefined ? { status } : {}),
      });
      const now = environment.now();
      const workflowRuns = [];
      for (const summary of summaries.slice(0, limit)) {
        const [run, accepted] = await Promise.all([
          tenantStore.getRun(summary.runId),
          tenantStore.getRunRequest(summary.runId),
        ]);
        workflowRuns.push(await workflowRunView(tenantStore, run, accepted, now));
      }
      return { workflowRuns, nextCursor: summaries.length > limit ? encodeCursor(offset + limit) : null };
    },
  );

  app.get<{ Params: { id: string } }>(
    "/v1/workflows/runs/:id",
    {
      config: { permission: "runs.read" },
      schema: {
        summary: "One workflow run: its status, each step (dependencies, status, agent run) and its result",
        tags: ["workflows"],
        params: workflowRunIdParams,
        response: { 200: { $ref: "WorkflowRun#" }, 404: errorReference, ...authenticatedErrors },
      },
    },
    async (request) => {
      const { run, accepted } = await ownWorkflowRun(request, request.params.id);
      return workflowRunView(store.forTenant(identityOf(request).tenantId), run, accepted, environment.now());
    },
  );
};
