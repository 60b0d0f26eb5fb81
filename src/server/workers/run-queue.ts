import { CharterError } from "../../foundation/charter-error.js";
import type { RunDecisionRequest } from "../execution/run-request.js";

/** The pg-boss queue of runs to start: each job names one accepted run (its request is in the run store). */
export const runStartQueue = "charter-run-start";
/** The pg-boss queue of humans' decisions on runs waiting for an approval. */
export const runDecisionQueue = "charter-run-decision";

export type RunQueueName = typeof runStartQueue | typeof runDecisionQueue;

export interface RunStartJobData {
  readonly tenantId: string;
  readonly runId: string;
}

export interface RunDecisionJobData {
  readonly decision: RunDecisionRequest;
}

export interface RunQueueJob<Data> {
  readonly id: string;
  readonly data: Data;
}

/**
 * The job queue of a PostgreSQL store's runs, over pg-boss: jobs are only pointers (a run's tenant and id, a
 * decision), the runs themselves are in the run store. A job is completed once its run is stored and under way;
 * from then on the run owner's lease in the store says who runs it, not the job.
 */
export interface RunQueue {
  /** The schema pg-boss keeps its tables in. */
  readonly schema: string;
  sendStart(data: RunStartJobData): Promise<void>;
  sendDecision(data: RunDecisionJobData): Promise<void>;
  /** Takes up to `batchSize` jobs of the queue (each is then active, for this worker alone, until completed). */
  fetch<Data>(queue: RunQueueName, batchSize: number): Promise<RunQueueJob<Data>[]>;
  complete(queue: RunQueueName, jobId: string): Promise<void>;
  close(): Promise<void>;
}

export interface OpenRunQueueOptions {
  /** The store's PostgreSQL URL (pg-boss opens its own connections to the same database). */
  readonly url: string;
  /** The store's schema: the queue's is `<schema>_queue`, so that installations (and tests) sharing a database stay apart. */
  readonly storeSchema: string;
  /**
   * How long a taken job may stay active before pg-boss gives it to another worker: it covers a worker dying between
   * taking a run and storing it (afterwards the run's lease takes over). Default 300 s.
   */
  readonly jobExpirySeconds?: number;
  readonly onError?: (error: unknown) => void;
}

const schemaPattern = /^[a-z_][a-z0-9_]{0,56}$/;

/** The name of the queue's schema for a store in `storeSchema`. */
export function runQueueSchema(storeSchema: string): string {
  if (!schemaPattern.test(storeSchema)) {
    throw new CharterError(
      "CONFIGURATION_INVALID",
      `the run store's schema '${storeSchema}' cannot name a job queue schema (<schema>_queue): use a lowercase identifier of at most 57 characters`,
      { details: { schema: storeSchema } },
    );
  }
  return `${storeSchema}_queue`;
}

/** Opens (and installs or migrates, once) the job queue beside a PostgreSQL run store. */
export async function openRunQueue(options: OpenRunQueueOptions): Promise<RunQueue> {
  const schema = runQueueSchema(options.storeSchema);
  // pg-boss is loaded only by the commands that queue runs (serve on PostgreSQL, worker).
  const { PgBoss } = await import("pg-boss");
  const boss = new PgBoss({
    connectionString: options.url,
    schema,
    max: 4,
    // Expired jobs (a worker died before storing its run) go back to the queue; no cron schedules are used.
    supervise: true,
    schedule: false,
    migrate: true,
    createSchema: true,
  });
  // An EventEmitter's unhandled "error" would end the process: the queue's errors are reported instead.
  boss.on("error", (error) => options.onError?.(error));
  await boss.start();
  const queueOptions = { expireInSeconds: options.jobExpirySeconds ?? 300, retryLimit: 10, retryDelay: 1 };
  await boss.createQueue(runStartQueue, queueOptions);
  await boss.createQueue(runDecisionQueue, queueOptions);
  return {
    schema,
    async sendStart(data) {
      await boss.send(runStartQueue, { ...data });
    },
    async sendDecision(data) {
      await boss.send(runDecisionQueue, { ...data });
    },
    async fetch<Data>(queue: RunQueueName, batchSize: number) {
      const jobs = await boss.fetch<Data>(queue, { batchSize: Math.max(1, batchSize) });
      return jobs.map((job) => ({ id: job.id, data: job.data }));
    },
    async complete(queue, jobId) {
      await boss.complete(queue, jobId);
    },
    async close() {
      await boss.stop({ graceful: false, close: true, timeout: 5_000 });
    },
  };
}
