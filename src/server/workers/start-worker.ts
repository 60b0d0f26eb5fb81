import { CharterError } from "../../foundation/charter-error.js";
import { openRunStore } from "../../store/open-run-store.js";
import { isPostgresUrl } from "../../store/run-store-location.js";
import { defaultLeaseMilliseconds } from "../execution/in-process-run-dispatcher.js";
import { loadRunExecutionSetup, type RunExecutionSetupOptions } from "../load-run-execution-setup.js";
import { openRunQueue } from "./run-queue.js";
import { startRunQueueWorker } from "./run-queue-worker.js";

/** `store` (`--store URL`) must be PostgreSQL. */
export interface StartWorkerOptions extends RunExecutionSetupOptions {
  /** Runs executed at once (`--concurrency`, default 2). */
  readonly concurrency?: number;
  /** `--lease`: how long a run's owner may go silent before another worker takes the run over (default 90 s). */
  readonly leaseMilliseconds?: number;
  /** `--poll`: how often the worker looks for jobs, cancellations and abandoned runs (default 1 s). */
  readonly pollMilliseconds?: number;
  readonly onError?: (error: unknown) => void;
}

export interface StartedWorker {
  /** The store it takes runs from (without a password) and the queue's schema. */
  readonly description: string;
  /** Stops taking runs, lets running turns reach their next checkpoint, then closes the queue and the store. */
  stop(): Promise<void>;
}

/** `charter worker`: executes a PostgreSQL store's queued runs, on any machine that reaches the database. */
export async function startWorker(options: StartWorkerOptions): Promise<StartedWorker> {
  const setup = await loadRunExecutionSetup(options);
  const url = setup.storeUrl;
  if (!isPostgresUrl(url)) {
    throw new CharterError(
      "CONFIGURATION_INVALID",
      "charter worker takes runs from a PostgreSQL store's queue: pass --store postgres://... (with SQLite, charter serve runs them itself)",
      { details: { argument: "store", backend: "sqlite" } },
    );
  }
  const store = await openRunStore({ url, environment: setup.environment });
  try {
    const queue = await openRunQueue({
      url,
      storeSchema: store.postgresSchema ?? "public",
      ...(options.onError !== undefined ? { onError: options.onError } : {}),
    });
    const context = setup.executionContext(store);
    const worker = startRunQueueWorker({
      context,
      queue,
      concurrency: options.concurrency ?? 2,
      leaseMilliseconds: options.leaseMilliseconds ?? defaultLeaseMilliseconds,
      ...(options.pollMilliseconds !== undefined ? { pollMilliseconds: options.pollMilliseconds } : {}),
      ...(options.onError !== undefined ? { onError: options.onError } : {}),
    });
    return {
      description: `${store.location} (queue schema ${queue.schema})`,
      async stop() {
        try {
          await worker.drain();
          await queue.close();
        } finally {
          await store.close();
          // After the drain: the spans of the runs that stopped at their checkpoint are flushed too.
          await setup.telemetry?.shutdown();
        }
      },
    };
  } catch (error) {
    await store.close();
    await setup.telemetry?.shutdown();
    throw error;
  }
}
