import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { CharterError } from "../../foundation/charter-error.js";
import type { RunRequestRecord } from "../../store/run-event-records.js";
import type { RunStore, StoredWorkReceipt } from "../../store/run-store.js";
import type { TenantScopeViolations } from "../identity/tenant-scope-violations.js";
import { authenticatedErrors, errorReference } from "./error-schema.js";
import { decodeCursor, encodeCursor } from "./list-cursor.js";
import { refuseOutsideTenant } from "./refuse-outside-tenant.js";
import { identityOf } from "./request-identity.js";
import { type WorkItemRunRecord, workItemRunSchema, workItemRunView } from "./work-item-run-view.js";

export interface WorkItemRunRoutesOptions {
  readonly store: RunStore;
  readonly violations: TenantScopeViolations;
}

const workItemRunIdParams = {
  type: "object",
  required: ["id"],
  properties: { id: { type: "string", minLength: 1, maxLength: 200 } },
} as const;

const receiptStatuses = ["success", "failure", "denied", "timeout", "conflict"] as const;

function workItemRunNotFound(runId: string): CharterError {
  return new CharterError("RUN_NOT_FOUND", `no work item run ${runId}`, {
    details: { runId, kind: "work-item" },
  });
}

/** Whether a run request the server accepted asked for a work item run. */
export function isWorkItemRequest(request: { readonly request: unknown } | null): boolean {
  return (request?.request as { kind?: unknown } | undefined)?.kind === "work-item";
}

/** What the run's last lifecycle event recorded of the item (its diffs and test output), for a run the server executed. */
export async function readWorkItemRunRecord(
  store: RunStore,
  accepted: RunRequestRecord | null,
): Promise<WorkItemRunRecord | null> {
  if (accepted === null || (accepted.state !== "COMPLETED" && accepted.state !== "FAILED")) return null;
  const [last] = await store.readRunEvents(accepted.runId, { afterSequence: accepted.lastSequence - 1 });
  const recorded = last?.data.work_item as { diffs?: unknown; test_output?: unknown } | undefined;
  if (recorded === undefined || recorded === null) return null;
  return {
    diffs: (recorded.diffs ?? {}) as Record<string, string>,
    testOutput: typeof recorded.test_output === "string" ? recorded.test_output : null,
  };
}

/**
 * `/v1/work-items/runs`: the tenant's work item runs, each with its receipt once it ended, and one of them by its
 * run id. Tenant-scoped as the run routes are: another tenant's run is a 404 and a recorded violation.
 */
export const workItemRunRoutes: FastifyPluginAsync<WorkItemRunRoutesOptions> = async (app, options) => {
  const { store, violations } = options;
  app.addSchema(workItemRunSchema);

  async function viewOf(tenantStore: RunStore, runId: string, receipt: StoredWorkReceipt | null) {
    const accepted = await tenantStore.getRunRequest(runId);
    const own = accepted !== null && isWorkItemRequest(accepted) ? accepted : null;
    const running = receipt === null && (await tenantStore.getRun(runId)) !== null;
    return workItemRunView(runId, receipt, own, await readWorkItemRunRecord(tenantStore, own), running);
  }

  /** The caller's tenant's work item run, or the same 404 whoever has it, recorded when another tenant does. */
  async function ownWorkItemRun(request: FastifyRequest, runId: string) {
    const tenantStore = store.forTenant(identityOf(request).tenantId);
    const [[receipt], accepted] = await Promise.all([
      tenantStore.listWorkReceipts({ runId, newestFirst: true, limit: 1 }),
      tenantStore.getRunRequest(runId),
    ]);
    if (receipt !== undefined || isWorkItemRequest(accepted))
      return viewOf(tenantStore, runId, receipt ?? null);
    // The tenant's own run of another kind is simply not a work item run; only another tenant's is a violation.
    if (accepted !== null || (await tenantStore.getRun(runId)) !== null) throw workItemRunNotFound(runId);
    const owner = await store.findRunTenant(runId);
    return refuseOutsideTenant(
      request,
      violations,
      owner?.tenantId,
      { kind: "work_item_run", id: runId },
      workItemRunNotFound(runId),
    );
  }

  app.get<{ Querystring: { status?: string; limit: number; cursor?: string } }>(
    "/v1/work-items/runs",
    {
      config: { permission: "runs.read" },
      schema: {
        summary: "The tenant's work item runs that have a receipt, newest first",
        tags: ["work-items"],
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: {
            status: { type: "string", enum: [...receiptStatuses] },
            limit: { type: "integer", minimum: 1, maximum: 100, default: 20 },
            cursor: { type: "string", minLength: 1, description: "nextCursor of the previous page." },
          },
        },
        response: {
          200: {
            type: "object",
            required: ["workItemRuns", "nextCursor"],
            properties: {
              workItemRuns: { type: "array", items: { $ref: "WorkItemRun#" } },
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
      const receipts = await tenantStore.listWorkReceipts({
        newestFirst: true,
        limit: limit + 1,
        offset,
        ...(status !== undefined ? { status } : {}),
      });
      const workItemRuns = [];
      for (const receipt of receipts.slice(0, limit)) {
        workItemRuns.push(await viewOf(tenantStore, receipt.runId, receipt));
      }
      return { workItemRuns, nextCursor: receipts.length > limit ? encodeCursor(offset + limit) : null };
    },
  );

  app.get<{ Params: { id: string } }>(
    "/v1/work-items/runs/:id",
    {
      config: { permission: "runs.read" },
      schema: {
        summary:
          "One work item run: the item, its status and its receipt (files with their diffs, the test output)",
        tags: ["work-items"],
        params: workItemRunIdParams,
        response: { 200: { $ref: "WorkItemRun#" }, 404: errorReference, ...authenticatedErrors },
      },
    },
    async (request) => ownWorkItemRun(request, request.params.id),
  );
};
