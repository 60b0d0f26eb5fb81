import { resolve } from "node:path";
import { createAgentCatalog } from "../agents/create-agent-catalog.js";
import { loadConfiguration } from "../config/load-configuration.js";
import { CharterError } from "../foundation/charter-error.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import { selectRunStore } from "../runner/select-run-store.js";
import { openRunStore } from "../store/open-run-store.js";
import { createServer } from "./create-server.js";
import { createInProcessRunDispatcher, defaultWorkers } from "./execution/in-process-run-dispatcher.js";
import type { RunDispatcher } from "./execution/run-dispatcher.js";
import type { RunExecutionContext } from "./execution/run-execution-context.js";
import { createTenantConfigurationResolver } from "./tenants/resolve-tenant-settings.js";

export interface StartServerOptions {
  readonly host: string;
  readonly port: number;
  /** `--config FILE`, layered over the configuration files found from `cwd`. */
  readonly configPath?: string;
  /** `--store URL`: wins over the configuration's store. */
  readonly store?: string;
  /**
   * `--workers N`: runs executed at once in this process (default 2). With a PostgreSQL store runs go through the
   * queue and 0 serves the API alone (`charter worker` executes them); with SQLite, at least 1.
   */
  readonly workers?: number;
  readonly cwd?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly environment?: RuntimeEnvironment;
  /** Told of a failure in the background (a run that could not be continued), as one line. */
  readonly onError?: (error: unknown) => void;
}

export interface StartedServer {
  /** Where it listens: `http://127.0.0.1:8787`. */
  readonly address: string;
  /**
   * Stops taking requests and runs, lets running turns reach their next checkpoint (the runs left are continued by
   * the next server to start), waits for the requests under way, then closes the store.
   */
  close(): Promise<void>;
}

/**
 * `charter serve`: loads the configuration as `charter run` does, opens the run store (chosen by the same rule),
 * and executes runs with `workers` workers: over SQLite in this process (the in-process dispatcher), over
 * PostgreSQL through the pg-boss queue (this process's workers beside any `charter worker`); then builds the server
 * and listens.
 */
export async function startServer(options: StartServerOptions): Promise<StartedServer> {
  const environment = options.environment ?? systemEnvironment;
  const cwd = options.cwd ?? process.cwd();
  const workers = options.workers ?? defaultWorkers;
  const configPath = options.configPath !== undefined ? resolve(cwd, options.configPath) : undefined;
  const loaded = await loadConfiguration({
    ...(configPath !== undefined ? { configPath } : {}),
    cwd,
    ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
  });
  const location = await selectRunStore({
    store: options.store,
    configured: loaded.configuration.store,
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
  });
  if (workers < 1 && !/^postgres(?:ql)?:\/\//i.test(location.url)) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      "--workers 0 serves the API alone, which needs a PostgreSQL store (whose queue charter worker takes runs from); with SQLite this process executes its runs: give --workers 1 or more",
      { details: { argument: "workers", value: workers, backend: "sqlite" } },
    );
  }
  const store = await openRunStore({ ...location, environment });
  try {
    const redactor = new SecretRedactor();
    for (const secret of loaded.secrets) redactor.addSecret(secret.value, secret.label);
    const context: RunExecutionContext = {
      store,
      agentCatalog: createAgentCatalog(),
      environment,
      cwd,
      ...(configPath !== undefined ? { configPath } : {}),
      ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
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
      redactor,
    };
    const onError = options.onError !== undefined ? { onError: options.onError } : {};
    let dispatcher: RunDispatcher;
    let stopDispatcher: () => Promise<void>;
    if (store.backend === "postgres") {
      // The queue is pg-boss, loaded only for a PostgreSQL store.
      const { createPgBossRunDispatcher } = await import("./workers/pg-boss-run-dispatcher.js");
      const queued = await createPgBossRunDispatcher({ context, url: location.url, workers, ...onError });
      dispatcher = queued;
      stopDispatcher = () => queued.close();
    } else {
      const inProcess = createInProcessRunDispatcher({ context, workers, ...onError });
      await inProcess.start();
      dispatcher = inProcess;
      stopDispatcher = () => inProcess.drain();
    }
    try {
      const server = await createServer({
        store,
        dispatcher,
        environment,
        configuration: loaded.configuration.server,
      });
      const address = await server.listen({ host: options.host, port: options.port });
      return {
        address,
        async close() {
          try {
            // Runs first: a request waiting for one (wait: true) is answered once it stops at its checkpoint.
            await stopDispatcher();
            await server.close();
          } finally {
            await store.close();
          }
        },
      };
    } catch (error) {
      await stopDispatcher();
      throw error;
    }
  } catch (error) {
    await store.close();
    throw error;
  }
}
