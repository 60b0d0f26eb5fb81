import { CharterError } from "../../foundation/charter-error.js";
import { settledRunEventTypes } from "../../store/run-event-records.js";
import { acceptRunRequest } from "../execution/accept-run-request.js";
import { defaultLeaseMilliseconds } from "../execution/in-process-run-dispatcher.js";
import type { RunDispatcher } from "../execution/run-dispatcher.js";
import { createRunEventHub } from "../execution/run-event-hub.js";
import type { RunExecutionContext } from "../execution/run-execution-context.js";
import { assertAwaitingApproval, recordCancelledRun } from "../execution/settle-run.js";
import { waitForRunToStop } from "../execution/watch-run-events.js";
import { openRunQueue, type RunQueue } from "./run-queue.js";
import { type RunQueueWorker, startRunQueueWorker } from "./run-queue-worker.js";

export interface PgBossRunDispatcherOptions {
  /** Its store must be PostgreSQL: the queue lives beside it. */
  readonly context: RunExecutionContext;
  /** The store's URL (the queue opens its own connections to the same database). */
  readonly url: string;
  /** Runs this process executes itself (`charter serve --workers N`); 0: it only queues them. Default 0. */
  readonly workers?: number;
  readonly leaseMilliseconds?: number;
  /** How often workers look for jobs and whenSettled looks at the store; default 1 s. */
  readonly pollMilliseconds?: number;
  readonly jobExpirySeconds?: number;
  readonly onError?: (error: unknown) => void;
}

export interface PgBossRunDispatcher extends RunDispatcher {
  /** Drains the local workers, then closes the queue's connections. */
  close(): Promise<void>;
}

/**
 * A `RunDispatcher` over pg-boss for a PostgreSQL store: `dispatch` stores the run (REQUESTED) and queues a job
 * naming it, `decide` queues the decision, and any worker that reaches the database (`charter worker`, or this
 * process's own with `workers`) executes them. `cancel` is recorded in the store, where the worker running the run
 * finds it; `whenSettled` reads the store (and hears this process's own events at once).
 */
export async function createPgBossRunDispatcher(
  options: PgBossRunDispatcherOptions,
): Promise<PgBossRunDispatcher> {
  const schema = options.context.store.postgresSchema;
  if (schema === null) {
    throw new CharterError(
      "CONFIGURATION_INVALID",
      "the job queue needs a PostgreSQL run store: with SQLite, one process serves and runs (in-process workers)",
      { details: { backend: options.context.store.backend } },
    );
  }
  const events = options.context.events ?? createRunEventHub();
  const context: RunExecutionContext = { ...options.context, events };
  const queue: RunQueue = await openRunQueue({
    url: options.url,
    storeSchema: schema,
    ...(options.jobExpirySeconds !== undefined ? { jobExpirySeconds: options.jobExpirySeconds } : {}),
    ...(options.onError !== undefined ? { onError: options.onError } : {}),
  });
  const pollMilliseconds = options.pollMilliseconds ?? 1000;
  const worker: RunQueueWorker | null =
    (options.workers ?? 0) > 0
      ? startRunQueueWorker({
          context,
          queue,
          concurrency: options.workers ?? 0,
          leaseMilliseconds: options.leaseMilliseconds ?? defaultLeaseMilliseconds,
          pollMilliseconds,
          ...(options.onError !== undefined ? { onError: options.onError } : {}),
        })
      : null;
  let draining = false;

  return {
    async dispatch(request) {
      if (draining) {
        throw new CharterError("INTERRUPTED", "the server is shutting down and takes no more runs", {
          details: { reason: "draining" },
        });
      }
      await acceptRunRequest(request, context);
      try {
        await queue.sendStart({ tenantId: request.tenantId, runId: request.runId });
      } catch (error) {
        // Not queued, so nobody would ever take it: its lifecycle ends here, and the caller is told.
        const store = context.store.forTenant(request.tenantId);
        const record = await store.getRunRequest(request.runId);
        if (record !== null) {
          await store
            .appendRunEvent({
              runId: request.runId,
              requestId: request.requestId,
              userId: request.userId,
              correlationId: request.correlationId,
              conversationId: request.conversationId,
              type: "FAILED",
              data: {
                error: {
                  code: "INTERNAL_ERROR",
                  class: "internal_error",
                  message: "the run could not be queued",
                },
              },
            })
            .catch(() => undefined);
        }
        throw error;
      }
    },

    async decide(decision) {
      const record = await context.store.forTenant(decision.tenantId).getRunRequest(decision.runId);
      if (record === null) {
        throw new CharterError("RUN_NOT_FOUND", `no run ${decision.runId}`, {
          details: { runId: decision.runId },
        });
      }
      assertAwaitingApproval(record);
      await queue.sendDecision({ decision });
    },

    async cancel(tenantId, runId) {
      const store = context.store.forTenant(tenantId);
      if (!(await store.requestRunCancel(runId))) return false;
      // A worker running it finds the request and stops it; one that nobody runs (queued, waiting for an approval,
      // stopped by a drain) ends here.
      const record = await store.getRunRequest(runId);
      const run = await store.getRun(runId);
      if (
        record !== null &&
        !settledRunEventTypes.includes(record.state) &&
        (run === null || run.status !== "running")
      )
        await recordCancelledRun(store, record, context);
      return true;
    },

    events,

    async whenSettled(tenantId, runId, signal) {
      await waitForRunToStop(context.store.forTenant(tenantId), runId, { signal, events, pollMilliseconds });
    },

    async drain() {
      draining = true;
      await worker?.drain();
    },

    async close() {
      draining = true;
      await worker?.drain();
      await queue.close();
    },
  };
}
