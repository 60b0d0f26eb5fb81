import { resolve } from "node:path";
import { createAgentCatalog } from "../../agents/create-agent-catalog.js";
import { loadConfiguration } from "../../config/load-configuration.js";
import { CharterError } from "../../foundation/charter-error.js";
import { type RuntimeEnvironment, systemEnvironment } from "../../foundation/environment.js";
import { selectRunStore } from "../../runner/select-run-store.js";
import { openRunStore } from "../../store/open-run-store.js";
import { defaultLeaseMilliseconds } from "../execution/in-process-run-dispatcher.js";
import type { RunExecutionContext } from "../execution/run-execution-context.js";
import { createTenantConfigurationResolver } from "../tenants/resolve-tenant-settings.js";
import { openRunQueue } from "./run-queue.js";
import { startRunQueueWorker } from "./run-queue-worker.js";

export interface StartWorkerOptions {
  /** `--config FILE`, layered over the configuration files found from `cwd`. */
  readonly configPath?: string;
  /** `--store URL`: wins over the configuration's store; must be PostgreSQL. */
  readonly store?: string;
  /** Runs executed at once (`--concurrency`, default 2). */
  readonly concurrency?: number;
  /** `--lease`: how long a run's owner may go silent before another worker takes the run over (default 90 s). */
  readonly leaseMilliseconds?: number;
  /** `--poll`: how often the worker looks for jobs, cancellations and abandoned runs (default 1 s). */
  readonly pollMilliseconds?: number;
  readonly cwd?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly environment?: RuntimeEnvironment;
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
  const environment = options.environment ?? systemEnvironment;
  const cwd = options.cwd ?? process.cwd();
  const configPath = options.configPath !== undefined ? resolve(cwd, options.configPath) : undefined;
  const loaded = await loadConfiguration({
    ...(configPath !== undefined ? { configPath } : {}),
    cwd,
    ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
  });
  const { url } = await selectRunStore({
    store: options.store,
    configured: loaded.configuration.store,
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
  });
  if (!/^postgres(?:ql)?:\/\//i.test(url)) {
    throw new CharterError(
      "CONFIGURATION_INVALID",
      "charter worker takes runs from a PostgreSQL store's queue: pass --store postgres://... (with SQLite, charter serve runs them itself)",
      { details: { argument: "store", backend: "sqlite" } },
    );
  }
  const store = await openRunStore({ url, environment });
  try {
    const queue = await openRunQueue({
      url,
      storeSchema: store.postgresSchema ?? "public",
      ...(options.onError !== undefined ? { onError: options.onError } : {}),
    });
    const context: RunExecutionContext = {
      store,
      agentCatalog: createAgentCatalog(),
      environment,
      cwd,
      ...(configPath !== undefined ? { configPath } : {}),
      ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
      ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
      // Each tenant's configuration (provider keys, models) applies wherever its runs execute.
      ...(loaded.configuration.server?.rateLimits?.toolCalls !== undefined
        ? { toolCallLimits: loaded.configuration.server.rateLimits.toolCalls }
        : {}),
      tenantConfiguration: createTenantConfigurationResolver({
        store,
        configuration: loaded.configuration,
        ...(options.processEnvironment !== undefined
          ? { processEnvironment: options.processEnvironment }
          : {}),
      }),
    };
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
        }
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
