import { CharterError } from "../../foundation/charter-error.js";
import { currentRunOwner } from "../../runner/run-owner.js";
import { settledRunEventTypes } from "../../store/run-event-records.js";
import { acceptRunRequest } from "./accept-run-request.js";
import type { RunDispatcher } from "./run-dispatcher.js";
import { createRunEventHub } from "./run-event-hub.js";
import type { RunExecutionContext } from "./run-execution-context.js";
import type { RunRequest } from "./run-request.js";
import { type RunTask, RunWorkerPool } from "./run-worker-pool.js";
import { assertAwaitingApproval, recordCancelledRun } from "./settle-run.js";
import { waitForRunToStop } from "./watch-run-events.js";

/** How many runs a server executes at once by default (`--workers`). */
export const defaultWorkers = 2;
/** How long a run's owner may go without a heartbeat before another process takes the run over, by default. */
export const defaultLeaseMilliseconds = 90_000;

export interface InProcessRunDispatcherOptions {
  readonly context: RunExecutionContext;
  /** Runs executed at once (`--workers`, default 2). */
  readonly workers?: number;
  /** See `RunWorkerPoolOptions.leaseMilliseconds`; default 90 s. */
  readonly leaseMilliseconds?: number;
  readonly onError?: (error: unknown) => void;
}

/** The in-process dispatcher, and what starting and stopping it takes. */
export interface InProcessRunDispatcher extends RunDispatcher {
  /**
   * Continues what an earlier process left unsettled in the store (runs accepted and never started, runs whose
   * process died, runs stopped by a drain), then keeps looking for abandoned runs every third of the lease.
   */
  start(): Promise<void>;
  /** Resolves once every run taken so far has stopped and the queue is empty (tests). */
  idle(): Promise<void>;
}

/**
 * A `RunDispatcher` that executes runs in this process, `workers` at once, in the order accepted: the SQLite
 * store's (one process serves the API and runs), or any store's when the server runs its own workers. A run is
 * stored (REQUESTED) before `dispatch` resolves, so a run accepted and not yet started is continued by the next
 * process to `start`; a run whose process died is taken over once its lease has expired.
 */
export function createInProcessRunDispatcher(options: InProcessRunDispatcherOptions): InProcessRunDispatcher {
  const events = options.context.events ?? createRunEventHub();
  const context: RunExecutionContext = {
    ...options.context,
    events,
    // The runs say they are alive three times per lease, so one missed heartbeat never looks like a dead process.
    environment: {
      ...options.context.environment,
      heartbeatIntervalMilliseconds: Math.max(
        1,
        Math.floor((options.leaseMilliseconds ?? defaultLeaseMilliseconds) / 3),
      ),
    },
  };
  const leaseMilliseconds = options.leaseMilliseconds ?? defaultLeaseMilliseconds;
  const pool = new RunWorkerPool({
    context,
    concurrency: Math.max(1, options.workers ?? defaultWorkers),
    leaseMilliseconds,
    owner: currentRunOwner(),
    ...(options.onError !== undefined ? { onError: options.onError } : {}),
  });
  const queue: RunTask[] = [];
  let sweeper: ReturnType<typeof setInterval> | null = null;

  function pump(): void {
    while (pool.free > 0 && queue.length > 0) {
      const task = queue.shift() as RunTask;
      void pool.run(task).then(pump);
    }
  }

  function enqueue(task: RunTask): void {
    const queued = queue.some(
      (other) =>
        other.request.runId === task.request.runId && other.request.tenantId === task.request.tenantId,
    );
    if (!queued && !pool.isRunning(task.request.tenantId, task.request.runId)) queue.push(task);
    pump();
  }

  async function sweep(startUnstarted: boolean): Promise<void> {
    if (pool.draining) return;
    for (const task of await pool.sweep({ startUnstarted })) enqueue(task);
  }

  async function requestOf(tenantId: string, runId: string, awaitingApproval: boolean): Promise<RunRequest> {
    const record = await context.store.forTenant(tenantId).getRunRequest(runId);
    if (record === null) throw new CharterError("RUN_NOT_FOUND", `no run ${runId}`, { details: { runId } });
    if (awaitingApproval) assertAwaitingApproval(record);
    return record.request as RunRequest;
  }

  return {
    async start() {
      await sweep(true);
      sweeper ??= setInterval(
        () => void sweep(false).catch((error: unknown) => options.onError?.(error)),
        Math.max(1, Math.floor(leaseMilliseconds / 3)),
      );
      sweeper.unref();
    },

    async dispatch(request) {
      if (pool.draining) {
        throw new CharterError("INTERRUPTED", "the server is shutting down and takes no more runs", {
          details: { reason: "draining" },
        });
      }
      await acceptRunRequest(request, context);
      enqueue({ kind: "start", request });
    },

    async decide(decision) {
      const request = await requestOf(decision.tenantId, decision.runId, true);
      enqueue({ kind: "decide", request, decision });
    },

    async cancel(tenantId, runId) {
      const store = context.store.forTenant(tenantId);
      if (!(await store.requestRunCancel(runId))) return false;
      if (pool.abort(tenantId, runId)) return true;
      // Nobody executes it here: queued (dropped), waiting for an approval, or stopped by a drain.
      const index = queue.findIndex(
        (task) => task.request.runId === runId && task.request.tenantId === tenantId,
      );
      if (index !== -1) queue.splice(index, 1);
      const record = await store.getRunRequest(runId);
      if (record !== null && !settledRunEventTypes.includes(record.state)) {
        const run = await store.getRun(runId);
        // A run row still running belongs to a process that is alive or will be taken over: it stops there.
        if (run === null || run.status !== "running") await recordCancelledRun(store, record, context);
      }
      return true;
    },

    events,

    async whenSettled(tenantId, runId, signal) {
      await waitForRunToStop(context.store.forTenant(tenantId), runId, { signal, events });
    },

    async drain() {
      if (sweeper !== null) clearInterval(sweeper);
      sweeper = null;
      // Queued runs stay stored (REQUESTED): the next process to start continues them.
      queue.length = 0;
      await pool.drain();
    },

    async idle() {
      for (;;) {
        await pool.idle();
        if (queue.length === 0) return;
        pump();
      }
    },
  };
}
