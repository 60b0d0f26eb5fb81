import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import type { BudgetsConfiguration } from "../../config/server-configuration-schema.js";
import { CharterError } from "../../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import { readPendingApprovals } from "../../runner/read-pending-approvals.js";
import { type RunRequestRecord, settledRunEventTypes } from "../../store/run-event-records.js";
import type { RunRecord, RunStatus } from "../../store/run-record.js";
import { runStatuses } from "../../store/run-record.js";
import type { RunStore } from "../../store/run-store.js";
import type { TranscriptEntry } from "../../transcript/transcript-entry.js";
import type { RunDispatcher } from "../execution/run-dispatcher.js";
import type { TenantScopeViolations } from "../identity/tenant-scope-violations.js";
import { traceContextField } from "../telemetry/trace-context-field.js";
import type { TenantConfiguration } from "../tenants/tenant-configuration.js";
import { cancelResponses, cancelServerRun } from "./cancel-server-run.js";
import { correlationIdOf } from "./correlation-id-of.js";
import { authenticatedErrors, errorReference } from "./error-schema.js";
import { refuseRunOutsideTenant } from "./refuse-run-outside-tenant.js";
import { identityOf } from "./request-identity.js";
import { runCallerFields } from "./run-caller-fields.js";
import { runIdParams } from "./run-id-params.js";
import { runListSchema } from "./run-list-schema.js";
import { queuedRunView, runSchema, runView } from "./run-view.js";
import { startRunHeaders } from "./start-run-headers.js";
import { startRunResponses } from "./start-run-responses.js";
import { dispatcherOf, startServerRun, waitUntilSettled } from "./start-server-run.js";
import { storedRunListPage } from "./stored-run-list-page.js";

/** One of the caller's runs: its row (null while queued) and its request (null for a run started elsewhere). */
interface OwnRun {
  readonly runId: string;
  readonly run: RunRecord | null;
  readonly accepted: RunRequestRecord | null;
}

export interface RunRoutesOptions {
  /** `server.budgets`: a tenant whose token or cost budget is spent starts no run (429); default none. */
  readonly budgets?: BudgetsConfiguration;
  readonly store: RunStore;
  /** Where accepted runs go; without one, the routes that start or steer runs answer 500 (`no_dispatcher`). */
  readonly dispatcher?: RunDispatcher;
  readonly environment: RuntimeEnvironment;
  readonly violations: TenantScopeViolations;
}

interface StartRunBody {
  readonly agent: string;
  readonly prompt?: string;
  readonly input?: unknown;
  readonly conversationId?: string;
  readonly metadata?: Record<string, unknown>;
  readonly wait?: boolean;
}

const startRunBody = {
  type: "object",
  additionalProperties: false,
  required: ["agent"],
  properties: {
    agent: {
      type: "string",
      pattern: "^[a-z0-9]+(?:-[a-z0-9]+)*$",
      description:
        "An agent id of the server's registry, or `auto` to let the server choose one for the prompt.",
    },
    prompt: { type: "string", minLength: 1, description: "The task, as text." },
    input: { description: "The task as a JSON value, given to the agent as its canonical JSON text." },
    conversationId: { type: "string", minLength: 1, maxLength: 200 },
    metadata: {
      type: "object",
      additionalProperties: true,
      description: "Your own data, kept with the run.",
    },
    wait: { type: "boolean", default: false, description: "Answer with the finished run instead of 202." },
  },
  // Exactly one of the two: the task as text, or as JSON.
  oneOf: [{ required: ["prompt"] }, { required: ["input"] }],
} as const;

const requestHeaders = {
  ...startRunHeaders,
  properties: {
    ...startRunHeaders.properties,
    traceparent: {
      type: "string",
      description:
        "A W3C trace context: the run's telemetry spans join your trace (an invalid one is ignored, as the W3C specification says).",
    },
    tracestate: { type: "string", description: "The W3C trace state that goes with traceparent." },
  },
} as const;

/**
 * `/v1/runs`: start a run (`POST`), list, read one, its transcript, cancel it, decide its pending approvals. Every
 * read and write goes through the caller's tenant's view of the store; a run of another tenant is a 404 and a
 * recorded violation.
 */
export const runRoutes: FastifyPluginAsync<RunRoutesOptions> = async (app, options) => {
  const { store, environment, violations } = options;
  app.addSchema(runSchema);

  /**
   * The caller's tenant's run (its row, and its request when the server accepted it; a run accepted and not
   * started yet has only its request), or the same 404 and a recorded violation when another tenant has it.
   */
  async function ownRun(request: FastifyRequest, runId: string): Promise<OwnRun> {
    const identity = identityOf(request);
    const tenantStore = store.forTenant(identity.tenantId);
    const [run, accepted] = await Promise.all([tenantStore.getRun(runId), tenantStore.getRunRequest(runId)]);
    if (run !== null || accepted !== null) return { runId, run, accepted };
    return refuseRunOutsideTenant(request, store, violations, runId);
  }

  /** A run as GET answers it: its row with its request, or its request alone while it is queued. */
  async function viewOf(tenantId: string, own: OwnRun) {
    if (own.run === null) {
      const accepted = own.accepted as RunRequestRecord;
      const ended = settledRunEventTypes.includes(accepted.state)
        ? ((
            await store
              .forTenant(tenantId)
              .readRunEvents(accepted.runId, { afterSequence: accepted.lastSequence - 1 })
          )[0] ?? null)
        : null;
      return queuedRunView(accepted, ended);
    }
    return runView(own.run, await pendingOf(store.forTenant(tenantId), own.run), own.accepted);
  }

  app.post<{ Body: StartRunBody }>(
    "/v1/runs",
    {
      config: { permission: "runs.start" },
      schema: {
        summary: "Start a run of an agent",
        description:
          "202 with the run id once the run is accepted (stored and queued), or with `wait: true` 200 with the run once it has finished or stopped (awaiting approval, interrupted).",
        tags: ["runs"],
        headers: requestHeaders,
        body: startRunBody,
        response: startRunResponses("Run#"),
      },
    },
    async (request, reply) => {
      const identity = identityOf(request);
      const tenantStore = store.forTenant(identity.tenantId);
      const { wait = false, ...asked } = request.body;
      const tenant = (await tenantStore.getTenantConfiguration())?.configuration as
        | TenantConfiguration
        | undefined;
      const allowed = tenant?.allowedAgents ?? null;
      // `auto` chooses among every agent of the server, so a tenant limited to some agents names one of them.
      if (allowed !== null && !allowed.includes(asked.agent)) {
        throw new CharterError(
          "PERMISSION_DENIED",
          asked.agent === "auto"
            ? `the tenant may run only its allowed agents (${allowed.join(", ") || "none"}): name one instead of auto`
            : `the tenant may not run the agent ${asked.agent}`,
          { details: { reason: "agent_not_allowed", agent: asked.agent, allowedAgents: [...allowed] } },
        );
      }
      const runId = await startServerRun(
        request,
        reply,
        options,
        asked,
        (accepted) => ({
          ...accepted,
          conversationId: asked.conversationId ?? null,
          agent: asked.agent,
          prompt: asked.prompt ?? null,
          input: asked.input === undefined ? null : asked.input,
          metadata: asked.metadata ?? {},
          ...traceContextField(request.headers),
        }),
        // What the request asks for, whoever retries it how often: everything but how the answer is wanted.
        { ...asked, userId: identity.userId },
      );
      reply.header("location", `/v1/runs/${runId}`);
      if (!wait) return reply.status(202).send({ runId });
      await waitUntilSettled(reply, options.dispatcher, identity.tenantId, runId);
      return reply.status(200).send(await viewOf(identity.tenantId, await ownRun(request, runId)));
    },
  );

  app.get<{ Querystring: { status?: RunStatus | "queued"; agent?: string; limit: number; cursor?: string } }>(
    "/v1/runs",
    {
      config: { permission: "runs.read" },
      schema: runListSchema({
        summary:
          "The tenant's runs, newest first: the runs waiting for a worker (status queued) lead the first page",
        tags: ["runs"],
        itemsKey: "runs",
        view: "Run#",
        status: { type: "string", enum: [...runStatuses, "queued"] },
        filters: { agent: { type: "string", minLength: 1 } },
        limit: { maximum: 500, default: 50 },
      }),
    },
    async (request) => {
      const { tenantId } = identityOf(request);
      const { agent } = request.query;
      const tenantStore = store.forTenant(tenantId);
      // The runs waiting for a worker (or just taken by one) have no run row yet: they lead the first page (they
      // are the newest), and the cursor counts stored runs only. Few wait at a time; past `limit` they are cut.
      const page = await storedRunListPage(
        tenantStore,
        request.query,
        agent !== undefined ? { agentId: agent } : {},
        {
          accepts: (accepted) => agent === undefined || queuedAgent(accepted) === agent,
          view: (accepted) => queuedRunView(accepted),
        },
      );
      return {
        runs: [...page.leading, ...page.stored.map((run) => runView(run))],
        nextCursor: page.nextCursor,
      };
    },
  );

  app.get<{ Params: { id: string } }>(
    "/v1/runs/:id",
    {
      config: { permission: "runs.read" },
      schema: {
        summary: "One run: its status, outcome, totals, final report and pending approvals",
        tags: ["runs"],
        params: runIdParams,
        response: { 200: { $ref: "Run#" }, 404: errorReference, ...authenticatedErrors },
      },
    },
    async (request) => {
      return viewOf(identityOf(request).tenantId, await ownRun(request, request.params.id));
    },
  );

  app.get<{ Params: { id: string }; Querystring: { fromSeq: number; limit: number } }>(
    "/v1/runs/:id/transcript",
    {
      config: { permission: "runs.read" },
      schema: {
        summary: "The run's hash-chained transcript entries, in order",
        tags: ["runs"],
        params: runIdParams,
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: {
            fromSeq: { type: "integer", minimum: 0, default: 0 },
            limit: { type: "integer", minimum: 1, maximum: 10000, default: 1000 },
          },
        },
        response: {
          200: {
            type: "object",
            required: ["runId", "entries", "nextFromSeq"],
            properties: {
              runId: { type: "string" },
              entries: { type: "array", items: { type: "object", additionalProperties: true } },
              nextFromSeq: {
                type: ["integer", "null"],
                description: "fromSeq of the next page; null at the end.",
              },
            },
          },
          404: errorReference,
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const { runId } = await ownRun(request, request.params.id);
      const { fromSeq, limit } = request.query;
      const entries: TranscriptEntry[] = [];
      let more = false;
      for await (const entry of store
        .forTenant(identityOf(request).tenantId)
        .readEntries(runId, { fromSeq })) {
        if (entries.length === limit) {
          more = true;
          break;
        }
        entries.push(entry);
      }
      return { runId, entries, nextFromSeq: more ? fromSeq + limit : null };
    },
  );

  app.post<{ Params: { id: string } }>(
    "/v1/runs/:id/cancel",
    {
      config: { permission: "runs.cancel" },
      schema: {
        summary: "Ask a running run to stop at its next checkpoint",
        tags: ["runs"],
        params: runIdParams,
        response: cancelResponses,
      },
    },
    async (request, reply) => {
      const { tenantId } = identityOf(request);
      const { runId } = await ownRun(request, request.params.id);
      const answer = await cancelServerRun(
        dispatcherOf(options.dispatcher),
        tenantId,
        runId,
        "run",
        async () => (await store.forTenant(tenantId).getRun(runId))?.status ?? "queued",
      );
      return reply.status(202).send(answer);
    },
  );

  app.post<{ Params: { id: string }; Body: { callId: string; decision: "approve" | "deny" } }>(
    "/v1/runs/:id/approvals",
    {
      config: { permission: "runs.approve" },
      schema: {
        summary: "A person's decision on a call the run waits on",
        description:
          "The run continues with the decision; a destructive call never runs on a model's own say-so.",
        tags: ["runs"],
        params: runIdParams,
        body: {
          type: "object",
          additionalProperties: false,
          required: ["callId", "decision"],
          properties: {
            callId: { type: "string", minLength: 1 },
            decision: { type: "string", enum: ["approve", "deny"] },
          },
        },
        response: {
          202: {
            type: "object",
            required: ["runId", "callId", "decision"],
            properties: {
              runId: { type: "string" },
              callId: { type: "string" },
              decision: { type: "string", enum: ["approve", "deny"] },
            },
          },
          404: errorReference,
          409: errorReference,
          ...authenticatedErrors,
        },
      },
    },
    async (request, reply) => {
      const identity = identityOf(request);
      const { run, runId } = await ownRun(request, request.params.id);
      const { callId, decision } = request.body;
      const pending = run === null ? [] : ((await pendingOf(store.forTenant(identity.tenantId), run)) ?? []);
      if (!pending.some((call) => call.callId === callId)) {
        throw new CharterError(
          "RUN_STATE_CONFLICT",
          `run ${runId} does not wait on a decision for call ${callId}`,
          {
            details: {
              runId,
              status: run?.status ?? "queued",
              callId,
              pendingCallIds: pending.map((call) => call.callId),
            },
          },
        );
      }
      const correlationId = correlationIdOf(request, reply, environment);
      await dispatcherOf(options.dispatcher).decide({
        ...runCallerFields(request, runId, correlationId),
        approve: decision === "approve" ? [callId] : [],
        deny: decision === "deny" ? [callId] : [],
      });
      return reply.status(202).send({ runId, callId, decision });
    },
  );
};

/** The calls a run awaiting approval waits on (null for a run in any other state). */
async function pendingOf(store: RunStore, run: RunRecord) {
  return run.status === "awaiting_approval" ? readPendingApprovals(store, run.runId) : null;
}

/** The agent a queued request asked for. */
function queuedAgent(record: RunRequestRecord): string | undefined {
  return (record.request as { readonly agent?: string }).agent;
}
