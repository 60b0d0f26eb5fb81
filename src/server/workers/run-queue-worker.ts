import { currentRunOwner } from "../../runner/run-owner.js";
import { settledRunEventTypes } from "../../store/run-event-records.js";
import type { RunExecutionContext } from "../execution/run-execution-context.js";
import type { RunRequest } from "../execution/run-request.js";
import { RunWorkerPool } from "../execution/run-worker-pool.js";
import {
  type RunDecisionJobData,
  type RunQueue,
  type RunQueueJob,
  type RunQueueName,
  type RunStartJobData,
  runDecisionQueue,
  runStartQueue,
} from "./run-queue.js";

export interface RunQueueWorkerOptions {
  readonly context: RunExecutionContext;
  readonly queue: RunQueue;
  /** Runs executed at once (`--concurrency`). */
  readonly concurrency: number;
  /** How long a run's owner may go without a heartbeat before another worker takes the run over. */
  readonly leaseMilliseconds: number;
  /** How often the worker looks for jobs, cancellations and abandoned runs; default 1 s. */
  readonly pollMilliseconds?: number;
  readonly onError?: (error: unknown) => void;
}

export interface RunQueueWorker {
  /** Stops taking runs, lets running turns reach their next checkpoint, and resolves once they have stopped. */
  drain(): Promise<void>;
}

/**
 * A worker of a PostgreSQL store's runs (`charter worker`, or `charter serve --workers N`): it takes decisions and
 * runs to start from the queue while it has free slots, aborts its runs whose cancellation was asked for (by any
 * process), and continues runs whose owner's lease has expired (a worker killed, say) or that a draining worker
 * stopped: through the durable resume, so completed turns and tool calls never run again. Every runner heartbeat
 * (a third of the lease) keeps its own runs' leases.
 */
export function startRunQueueWorker(options: RunQueueWorkerOptions): RunQueueWorker {
  const context: RunExecutionContext = {
    ...options.context,
    environment: {
      ...options.context.environment,
      heartbeatIntervalMilliseconds: Math.max(1, Math.floor(options.leaseMilliseconds / 3)),
    },
  };
  const report = (error: unknown) => options.onError?.(error);
  const pool = new RunWorkerPool({
    context,
    concurrency: Math.max(1, options.concurrency),
    leaseMilliseconds: options.leaseMilliseconds,
    owner: currentRunOwner(),
    onError: report,
  });
  const sweepEvery = Math.max(1, Math.floor(options.leaseMilliseconds / 3));
  let lastSweep = Number.NEGATIVE_INFINITY;
  let ticking: Promise<void> | null = null;

  /** A job is done with once its run is stored and under way, or ended: its lease then says who runs it. */
  function completeOnAccept(queue: RunQueueName, job: RunQueueJob<unknown>) {
    return () => void options.queue.complete(queue, job.id).catch(report);
  }

  async function takeDecision(job: RunQueueJob<RunDecisionJobData>): Promise<void> {
    const { decision } = job.data;
    const store = context.store.forTenant(decision.tenantId);
    const record = await store.getRunRequest(decision.runId);
    // A decision for a run that no longer waits (decided already, cancelled) has nothing left to do.
    if (record === null || record.state !== "AWAITING_APPROVAL") {
      await options.queue.complete(runDecisionQueue, job.id);
      return;
    }
    void pool.run(
      { kind: "decide", request: record.request as RunRequest, decision },
      completeOnAccept(runDecisionQueue, job),
    );
  }

  async function takeStart(job: RunQueueJob<RunStartJobData>): Promise<void> {
    const store = context.store.forTenant(job.data.tenantId);
    const record = await store.getRunRequest(job.data.runId);
    // Settled already (cancelled while queued), or stored by a worker that took the job before (then its lease
    // decides who continues it): nothing to start.
    if (
      record === null ||
      settledRunEventTypes.includes(record.state) ||
      (await store.getRun(job.data.runId)) !== null
    ) {
      await options.queue.complete(runStartQueue, job.id);
      return;
    }
    void pool.run(
      { kind: "start", request: record.request as RunRequest },
      completeOnAccept(runStartQueue, job),
    );
  }

  async function tick(): Promise<void> {
    await pool.checkCancellations();
    const now = context.environment.now();
    if (pool.free > 0 && now - lastSweep >= sweepEvery) {
      lastSweep = now;
      for (const task of await pool.sweep({ startUnstarted: false })) void pool.run(task);
    }
    while (pool.free > 0) {
      const decisions = await options.queue.fetch<RunDecisionJobData>(runDecisionQueue, pool.free);
      for (const job of decisions) await takeDecision(job).catch(report);
      if (pool.free === 0) break;
      const starts = await options.queue.fetch<RunStartJobData>(runStartQueue, pool.free);
      for (const job of starts) await takeStart(job).catch(report);
      if (decisions.length === 0 && starts.length === 0) break;
    }
  }

  const timer = setInterval(() => {
    if (ticking !== null || pool.draining) return;
    ticking = tick()
      .catch(report)
      .finally(() => {
        ticking = null;
      });
  }, options.pollMilliseconds ?? 1000);

  return {
    async drain() {
      clearInterval(timer);
      await pool.drain();
      await ticking;
    },
  };
}
