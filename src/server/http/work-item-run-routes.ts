import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { isAgentIdReference } from "../../config/agent-reference.js";
import type { BudgetsConfiguration } from "../../config/server-configuration-schema.js";
import { CharterError } from "../../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import { type RunRequestRecord, settledRunEventTypes } from "../../store/run-event-records.js";
import type { RunStore, StoredWorkReceipt } from "../../store/run-store.js";
import { type LoadedWorkItem, validateWorkItem } from "../../work/load-work-item.js";
import { findServerRepository } from "../execution/find-server-workflow.js";
import { pendingApprovalsOf } from "../execution/pending-approvals-of.js";
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
import { listPage } from "./list-page.js";
import { refuseRunOutsideTenant } from "./refuse-run-outside-tenant.js";
import { identityOf } from "./request-identity.js";
import { runIdParams } from "./run-id-params.js";
import { runListSchema } from "./run-list-schema.js";
import { runNotFound } from "./run-not-found.js";
import { startRunHeaders } from "./start-run-headers.js";
import { startRunResponses } from "./start-run-responses.js";
import { dispatcherOf, startServerRun, waitUntilSettled } from "./start-server-run.js";
import { type WorkItemRunRecord, workItemRunSchema, workItemRunView } from "./work-item-run-view.js";

export interface WorkItemRunRoutesOptions {
  /** `server.budgets`: a tenant whose token or cost budget is spent starts no run (429); default none. */
  readonly budgets?: BudgetsConfiguration;
  readonly store: RunStore;
  readonly environment: RuntimeEnvironment;
  readonly violations: TenantScopeViolations;
  /** Where accepted runs go; without one, starting a work item answers 500 (`no_dispatcher`). */
  readonly dispatcher?: RunDispatcher;
  /** `server.repositories`: the git working trees work items may change, by name. */
  readonly repositories?: Readonly<Record<string, string>>;
}

interface StartWorkItemBody {
  readonly repository: string;
  readonly item: Record<string, unknown>;
  readonly metadata?: Record<string, unknown>;
  readonly wait?: boolean;
}

const startWorkItemBody = {
  type: "object",
  additionalProperties: false,
  required: ["repository", "item"],
  properties: {
    repository: {
      type: "string",
      minLength: 1,
      maxLength: 200,
      description: "The repository's name in the server's `server.repositories` (never a path).",
    },
    item: {
      type: "object",
      additionalProperties: true,
      description:
        "The work item, as a work item file holds it (id, agent_id, description, constraints, test_command...); its agent_id is an agent id of the server's registry.",
    },
    metadata: {
      type: "object",
      additionalProperties: true,
      description: "Your own data, kept with the run.",
    },
    wait: {
      type: "boolean",
      default: false,
      description: "Answer with the ended work item run instead of 202.",
    },
  },
} as const;

/** The item checked against the work item schema, its agent a registry id the tenant may run; 422 naming the field. */
function checkWorkItem(item: unknown, allowed: readonly string[] | null): LoadedWorkItem {
  let loaded: LoadedWorkItem;
  try {
    loaded = validateWorkItem(item, "body/item", []);
  } catch (error) {
    if (!CharterError.isInstance(error)) throw error;
    const field = typeof error.details.field === "string" ? error.details.field : "";
    throw new CharterError(
      "WORK_ITEM_INVALID",
      `the work item is not valid: ${error.message.replace(/^work item file body\/item: /, "")}`,
      { details: { ...error.details, file: null, location: `body/item${field === "" ? "" : `/${field}`}` } },
    );
  }
  const agent = loaded.item.agent_id;
  if (!isAgentIdReference(agent)) {
    // Only registry agents run on a server: a path would let a caller run any file the server can read.
    throw new CharterError(
      "WORK_ITEM_INVALID",
      `the work item's agent_id '${agent}' is not an agent id: a server runs the agents of its registry only`,
      { details: { field: "agent_id", location: "body/item/agent_id", reason: "not_an_id" } },
    );
  }
  if (allowed !== null && !allowed.includes(agent)) {
    throw new CharterError("PERMISSION_DENIED", `the tenant may not run the agent ${agent}`, {
      details: { reason: "agent_not_allowed", agent, allowedAgents: [...allowed] },
    });
  }
  return loaded;
}

const receiptStatuses = ["success", "failure", "denied", "timeout", "conflict"] as const;

/** The statuses of an item not ended yet (no receipt): waiting for a worker, taken by one, or for a person. */
const unfinishedStatuses = ["queued", "running", "awaiting_approval"] as const;

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
    // Taken by a worker: its run is stored, or its lifecycle has moved on from REQUESTED (and is not over).
    const running =
      receipt === null &&
      ((own !== null && own.state !== "REQUESTED" && !settledRunEventTypes.includes(own.state)) ||
        (await tenantStore.getRun(runId)) !== null);
    const pending =
      receipt === null && own?.state === "AWAITING_APPROVAL"
        ? await pendingApprovalsOf(tenantStore, { runId, kind: "work-item" })
        : [];
    return workItemRunView(
      runId,
      receipt,
      own,
      await readWorkItemRunRecord(tenantStore, own),
      running,
      pending,
    );
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
    if (accepted !== null || (await tenantStore.getRun(runId)) !== null)
      throw runNotFound(runId, "work-item");
    return refuseRunOutsideTenant(request, store, violations, runId, "work-item");
  }

  app.post<{ Body: StartWorkItemBody }>(
    "/v1/work-items/runs",
    {
      config: { permission: "runs.start" },
      schema: {
        summary: "Start a work item run on one of the server's repositories",
        description:
          "202 with the run id once the work item run is accepted (stored and queued), or with `wait: true` 200 with the work item run and its receipt once it has ended.",
        tags: ["work-items"],
        headers: startRunHeaders,
        body: startWorkItemBody,
        response: startRunResponses("WorkItemRun#"),
      },
    },
    async (request, reply) => {
      const identity = identityOf(request);
      const { wait = false, ...asked } = request.body;
      findServerRepository(options.repositories, asked.repository);
      const tenant = (await store.forTenant(identity.tenantId).getTenantConfiguration())?.configuration as
        | TenantConfiguration
        | undefined;
      const loaded = checkWorkItem(asked.item, tenant?.allowedAgents ?? null);
      const runId = await startServerRun(request, reply, options, asked, (accepted) => ({
        v: runRequestVersion,
        kind: "work-item",
        ...accepted,
        conversationId: null,
        agent: loaded.item.agent_id,
        repository: asked.repository,
        item: asked.item,
        prompt: null,
        input: null,
        metadata: asked.metadata ?? {},
      }));
      reply.header("location", `/v1/work-items/runs/${runId}`);
      if (!wait) return reply.status(202).send({ runId });
      await waitUntilSettled(reply, options.dispatcher, identity.tenantId, runId);
      return reply.status(200).send(await ownWorkItemRun(request, runId));
    },
  );

  app.post<{ Params: { id: string }; Body: ServerApprovalBody }>(
    "/v1/work-items/runs/:id/approvals",
    {
      config: { permission: "runs.approve" },
      schema: {
        summary: "A person's decision on a call a work item's agent waits on",
        description:
          "The item goes on with the decision (an approved call runs once, a denied one is a tool failure its agent sees), then ends as any item does; a destructive call never runs on a model's own say-so.",
        tags: ["work-items"],
        params: runIdParams,
        body: serverApprovalBody,
        response: serverApprovalResponses,
      },
    },
    async (request, reply) => {
      const runId = request.params.id;
      const view = await ownWorkItemRun(request, runId);
      const accepted = await store.forTenant(identityOf(request).tenantId).getRunRequest(runId);
      const answer = await decideServerRunApproval(
        request,
        reply,
        { store, dispatcher: options.dispatcher, environment: options.environment },
        { runId, kind: "work-item", accepted, status: view.status },
      );
      return reply.status(202).send(answer);
    },
  );

  app.post<{ Params: { id: string } }>(
    "/v1/work-items/runs/:id/cancel",
    {
      config: { permission: "runs.cancel" },
      schema: {
        summary: "Ask a work item run to stop: its working tree is restored and its receipt says interrupted",
        tags: ["work-items"],
        params: runIdParams,
        response: cancelResponses,
      },
    },
    async (request, reply) => {
      const { tenantId } = identityOf(request);
      const runId = request.params.id;
      const view = await ownWorkItemRun(request, runId);
      const answer = await cancelServerRun(
        dispatcherOf(options.dispatcher),
        tenantId,
        runId,
        "work item run",
        () => view.status,
      );
      return reply.status(202).send(answer);
    },
  );

  app.get<{ Querystring: { status?: string; limit: number; cursor?: string } }>(
    "/v1/work-items/runs",
    {
      config: { permission: "runs.read" },
      schema: runListSchema({
        summary:
          "The tenant's work item runs, newest first: the items not ended yet (status queued, running or awaiting_approval) lead the first page",
        tags: ["work-items"],
        itemsKey: "workItemRuns",
        view: "WorkItemRun#",
        status: { type: "string", enum: [...unfinishedStatuses, ...receiptStatuses] },
        limit: { maximum: 100, default: 20 },
      }),
    },
    async (request) => {
      const tenantStore = store.forTenant(identityOf(request).tenantId);
      const { status, limit, cursor } = request.query;
      const unfinished = status === undefined || (unfinishedStatuses as readonly string[]).includes(status);
      // The items not ended yet have no receipt: they lead the first page (they are the newest), and the cursor
      // counts the items with a receipt only, as GET /v1/runs does with its queued runs.
      const page = await listPage(
        cursor,
        limit,
        status !== undefined && unfinished
          ? null
          : (room, offset) =>
              tenantStore.listWorkReceipts({
                newestFirst: true,
                limit: room,
                offset,
                ...(status !== undefined ? { status } : {}),
              }),
        unfinished
          ? async () => {
              const views = [];
              for (const accepted of await tenantStore.listQueuedRunRequests({
                limit: 1000,
                started: true,
              })) {
                if (!isWorkItemRequest(accepted)) continue;
                const [receipt] = await tenantStore.listWorkReceipts({
                  runId: accepted.runId,
                  newestFirst: true,
                  limit: 1,
                });
                // Its receipt is stored a moment before its lifecycle ends: it is listed with the ended items.
                if (receipt !== undefined) continue;
                const view = await viewOf(tenantStore, accepted.runId, null);
                if (status === undefined || view.status === status) views.push(view);
              }
              return views;
            }
          : undefined,
      );
      const workItemRuns = [...page.leading];
      for (const receipt of page.stored) {
        workItemRuns.push(await viewOf(tenantStore, receipt.runId, receipt));
      }
      return { workItemRuns, nextCursor: page.nextCursor };
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
        params: runIdParams,
        response: { 200: { $ref: "WorkItemRun#" }, 404: errorReference, ...authenticatedErrors },
      },
    },
    async (request) => ownWorkItemRun(request, request.params.id),
  );
};
