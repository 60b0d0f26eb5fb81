import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import type { BudgetsConfiguration } from "../../config/server-configuration-schema.js";
import { CharterError } from "../../foundation/charter-error.js";
import { contentHash } from "../../foundation/content-hash.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import { checkCorrelationId } from "../../runner/check-correlation-id.js";
import { readPendingApprovals } from "../../runner/read-pending-approvals.js";
import { type RunRequestRecord, settledRunEventTypes } from "../../store/run-event-records.js";
import type { RunRecord, RunStatus } from "../../store/run-record.js";
import { runStatuses } from "../../store/run-record.js";
import type { RunStore } from "../../store/run-store.js";
import type { TranscriptEntry } from "../../transcript/transcript-entry.js";
import type { RunDispatcher } from "../execution/run-dispatcher.js";
import type { RunRequest } from "../execution/run-request.js";
import type { TenantScopeViolations } from "../identity/tenant-scope-violations.js";
import { checkTenantBudgets } from "../limits/tenant-budgets.js";
import { traceContextField } from "../telemetry/trace-context-field.js";
import type { TenantConfiguration } from "../tenants/tenant-configuration.js";
import { cancelResponses, cancelServerRun } from "./cancel-server-run.js";
import { authenticatedErrors, errorReference } from "./error-schema.js";
import { decodeCursor, encodeCursor } from "./list-cursor.js";
import { refuseOutsideTenant } from "./refuse-outside-tenant.js";
import { identityOf } from "./request-identity.js";
import { queuedRunView, runSchema, runView } from "./run-view.js";
import { dispatcherOf } from "./start-server-run.js";

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

const runIdParams = {
  type: "object",
  required: ["id"],
  properties: { id: { type: "string", minLength: 1, maxLength: 200 } },
} as const;

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
  type: "object",
  properties: {
    "idempotency-key": {
      type: "string",
      minLength: 1,
      maxLength: 255,
      description: "Retries with the same key and body return the same run; another body is 422.",
    },
    "x-correlation-id": {
      type: "string",
      description: "Your id for what the run serves (generated if absent).",
    },
    traceparent: {
      type: "string",
      description:
        "A W3C trace context: the run's telemetry spans join your trace (an invalid one is ignored, as the W3C specification says).",
    },
    tracestate: { type: "string", description: "The W3C trace state that goes with traceparent." },
  },
} as const;

function runNotFound(runId: string): CharterError {
  return new CharterError("RUN_NOT_FOUND", `no run ${runId}`, { details: { runId } });
}

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
    const owner = await store.findRunTenant(runId);
    return refuseOutsideTenant(
      request,
      violations,
      owner?.tenantId,
      { kind: "run", id: runId },
      runNotFound(runId),
    );
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

  /** The correlation id the caller sent (checked: it travels on as an HTTP header), or a new one. */
  function correlationIdOf(request: FastifyRequest, reply: FastifyReply): string {
    const sent = request.headers["x-correlation-id"];
    const correlationId = typeof sent === "string" ? sent : environment.newId("corr");
    checkCorrelationId(correlationId);
    reply.header("x-correlation-id", correlationId);
    return correlationId;
  }

  /** Resolves when the run has settled, or the caller went away (then the run goes on, unwatched). */
  async function waitUntilSettled(reply: FastifyReply, tenantId: string, runId: string): Promise<void> {
    const gone = new AbortController();
    const onClose = () => gone.abort();
    reply.raw.once("close", onClose);
    try {
      await dispatcherOf(options.dispatcher).whenSettled(tenantId, runId, gone.signal);
    } finally {
      reply.raw.off("close", onClose);
    }
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
        response: {
          200: { $ref: "Run#" },
          202: { type: "object", required: ["runId"], properties: { runId: { type: "string" } } },
          404: errorReference,
          422: errorReference,
          ...authenticatedErrors,
        },
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
      const correlationId = correlationIdOf(request, reply);
      const idempotencyKey = request.headers["idempotency-key"];
      const now = environment.now();
      let runId = environment.newId("run");
      let claimedKey: string | null = null;
      if (typeof idempotencyKey === "string") {
        // What the request asks for, whoever retries it how often: everything but how the answer is wanted.
        const requestHash = contentHash({ ...asked, userId: identity.userId });
        const claim = await tenantStore.claimIdempotencyKey({
          idempotencyKey,
          requestHash,
          runId,
          createdAt: now,
        });
        if (claim.claimed) claimedKey = idempotencyKey;
        else if (claim.existing.requestHash !== requestHash) {
          throw new CharterError(
            "IDEMPOTENCY_KEY_REUSED",
            "this Idempotency-Key was used for another request: use a new key for a new request",
            { details: { idempotencyKey, runId: claim.existing.runId } },
          );
        } else runId = claim.existing.runId;
      }
      if (typeof idempotencyKey !== "string" || claimedKey !== null) {
        const runRequest: RunRequest = {
          runId,
          requestId: request.id,
          tenantId: identity.tenantId,
          userId: identity.userId,
          role: identity.role,
          correlationId,
          conversationId: asked.conversationId ?? null,
          agent: asked.agent,
          prompt: asked.prompt ?? null,
          input: asked.input === undefined ? null : asked.input,
          metadata: asked.metadata ?? {},
          requestedAt: now,
          ...traceContextField(request.headers),
        };
        try {
          // A retry of a run accepted before is answered below whatever the budgets; a new run needs budget left.
          await checkTenantBudgets({
            store,
            tenantId: identity.tenantId,
            environment,
            ...(options.budgets !== undefined ? { serverBudgets: options.budgets } : {}),
          });
          await dispatcherOf(options.dispatcher).dispatch(runRequest);
        } catch (error) {
          // Not accepted: a retry with the same key must be free to try again.
          if (claimedKey !== null) await tenantStore.releaseIdempotencyKey(claimedKey, runId);
          throw error;
        }
      }
      reply.header("location", `/v1/runs/${runId}`);
      if (!wait) return reply.status(202).send({ runId });
      await waitUntilSettled(reply, identity.tenantId, runId);
      return reply.status(200).send(await viewOf(identity.tenantId, await ownRun(request, runId)));
    },
  );

  app.get<{ Querystring: { status?: RunStatus | "queued"; agent?: string; limit: number; cursor?: string } }>(
    "/v1/runs",
    {
      config: { permission: "runs.read" },
      schema: {
        summary:
          "The tenant's runs, newest first: the runs waiting for a worker (status queued) lead the first page",
        tags: ["runs"],
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: {
            status: { type: "string", enum: [...runStatuses, "queued"] },
            agent: { type: "string", minLength: 1 },
            limit: { type: "integer", minimum: 1, maximum: 500, default: 50 },
            cursor: { type: "string", minLength: 1, description: "nextCursor of the previous page." },
          },
        },
        response: {
          200: {
            type: "object",
            required: ["runs", "nextCursor"],
            properties: {
              runs: { type: "array", items: { $ref: "Run#" } },
              nextCursor: { type: ["string", "null"] },
            },
          },
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const { tenantId } = identityOf(request);
      const { status, agent, limit, cursor } = request.query;
      const offset = cursor === undefined ? 0 : decodeCursor(cursor);
      const tenantStore = store.forTenant(tenantId);
      // The runs waiting for a worker (or just taken by one) have no run row yet: they lead the first page (they
      // are the newest), and the cursor counts stored runs only. Few wait at a time; past `limit` they are cut.
      const queued =
        offset === 0 && (status === undefined || status === "queued")
          ? (await tenantStore.listQueuedRunRequests({ limit: 1000 }))
              .filter((queuedRequest) => agent === undefined || queuedAgent(queuedRequest) === agent)
              .map((queuedRequest) => queuedRunView(queuedRequest))
              .filter((view) => status === undefined || view.status === status)
              .slice(0, limit)
          : [];
      if (status === "queued") return { runs: queued, nextCursor: null };
      const room = limit - queued.length;
      // One more than asked for: whether there is a next page.
      const runs = await tenantStore.listRuns({
        limit: room + 1,
        offset,
        ...(status !== undefined ? { status } : {}),
        ...(agent !== undefined ? { agentId: agent } : {}),
      });
      return {
        runs: [...queued, ...runs.slice(0, room).map((run) => runView(run))],
        nextCursor: runs.length > room ? encodeCursor(offset + room) : null,
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
      const correlationId = correlationIdOf(request, reply);
      await dispatcherOf(options.dispatcher).decide({
        runId,
        requestId: request.id,
        tenantId: identity.tenantId,
        userId: identity.userId,
        role: identity.role,
        correlationId,
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
