import type { FastifyReply, FastifyRequest } from "fastify";
import type { BudgetsConfiguration } from "../../config/server-configuration-schema.js";
import { CharterError } from "../../foundation/charter-error.js";
import { contentHash } from "../../foundation/content-hash.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { RunStore } from "../../store/run-store.js";
import type { RunDispatcher } from "../execution/run-dispatcher.js";
import type { RunRequest } from "../execution/run-request.js";
import { checkTenantBudgets } from "../limits/tenant-budgets.js";
import { correlationIdOf } from "./correlation-id-of.js";
import { identityOf } from "./request-identity.js";
import { type RunCallerFields, runCallerFields } from "./run-caller-fields.js";

export interface StartServerRunOptions {
  readonly store: RunStore;
  readonly environment: RuntimeEnvironment;
  readonly dispatcher?: RunDispatcher;
  /** `server.budgets`: a tenant whose token or cost budget is spent starts no run (429); default none. */
  readonly budgets?: BudgetsConfiguration;
}

/** The dispatcher, or the 500 a server that executes no runs answers. */
export function dispatcherOf(dispatcher: RunDispatcher | undefined): RunDispatcher {
  if (dispatcher === undefined) {
    throw new CharterError("INTERNAL_ERROR", "this server executes no runs", {
      details: { reason: "no_dispatcher" },
    });
  }
  return dispatcher;
}

/**
 * Accepts a run for the agent, workflow and work item routes: the correlation id (the caller's, checked, or a new
 * one), the Idempotency-Key claimed for the tenant with the hash of what is asked (`asked`, the body without
 * `wait`, with the route and the user), the tenant's budgets checked, the request built (who asked, when, and what the route adds) and dispatched. Returns the run id (an earlier run's for a retry, whatever the budgets); a key reused with another
 * body is 422 IDEMPOTENCY_KEY_REUSED. `hashed` replaces what the key's hash covers: `POST /v1/runs` keeps the
 * hash its keys were stored with before the other routes existed, so a retry across an upgrade finds its run.
 */
export async function startServerRun(
  request: FastifyRequest,
  reply: FastifyReply,
  options: StartServerRunOptions,
  asked: unknown,
  build: (accepted: RunCallerFields & Pick<RunRequest, "requestedAt">) => RunRequest,
  hashed?: unknown,
): Promise<string> {
  const identity = identityOf(request);
  const tenantStore = options.store.forTenant(identity.tenantId);
  const dispatcher = dispatcherOf(options.dispatcher);
  const correlationId = correlationIdOf(request, reply, options.environment);
  const idempotencyKey = request.headers["idempotency-key"];
  const now = options.environment.now();
  const runId = options.environment.newId("run");
  let claimedKey: string | null = null;
  if (typeof idempotencyKey === "string") {
    const requestHash = contentHash(
      hashed === undefined
        ? { asked, route: request.routeOptions.url ?? null, userId: identity.userId }
        : hashed,
    );
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
    } else return claim.existing.runId;
  }
  try {
    // A retry of a run accepted before is answered above whatever the budgets; a new run needs budget left.
    await checkTenantBudgets({
      store: options.store,
      tenantId: identity.tenantId,
      environment: options.environment,
      ...(options.budgets !== undefined ? { serverBudgets: options.budgets } : {}),
    });
    await dispatcher.dispatch(build({ ...runCallerFields(request, runId, correlationId), requestedAt: now }));
  } catch (error) {
    // Not accepted: a retry with the same key must be free to try again.
    if (claimedKey !== null) await tenantStore.releaseIdempotencyKey(claimedKey, runId);
    throw error;
  }
  return runId;
}

/** Resolves when the run has settled, or the caller went away (then the run goes on, unwatched). */
export async function waitUntilSettled(
  reply: FastifyReply,
  dispatcher: RunDispatcher | undefined,
  tenantId: string,
  runId: string,
): Promise<void> {
  const gone = new AbortController();
  const onClose = () => gone.abort();
  reply.raw.once("close", onClose);
  try {
    await dispatcherOf(dispatcher).whenSettled(tenantId, runId, gone.signal);
  } finally {
    reply.raw.off("close", onClose);
  }
}
