import { CharterError } from "../foundation/charter-error.js";
import { openRunStore } from "../store/open-run-store.js";
import { isPostgresUrl } from "../store/run-store-location.js";
import { createServer } from "./create-server.js";
import { createInProcessRunDispatcher, defaultWorkers } from "./execution/in-process-run-dispatcher.js";
import type { RunDispatcher } from "./execution/run-dispatcher.js";
import { loadRunExecutionSetup, type RunExecutionSetupOptions } from "./load-run-execution-setup.js";

export interface StartServerOptions extends RunExecutionSetupOptions {
  readonly host: string;
  readonly port: number;
  /** `--backlog N`: connections queued before they are accepted; default the configuration's `server.listenBacklog`. */
  readonly backlog?: number;
  /**
   * `--workers N`: runs executed at once in this process (default 2). With a PostgreSQL store runs go through the
   * queue and 0 serves the API alone (`charter worker` executes them); with SQLite, at least 1.
   */
  readonly workers?: number;
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
  const workers = options.workers ?? defaultWorkers;
  const setup = await loadRunExecutionSetup(options);
  const { environment, loaded } = setup;
  if (workers < 1 && !isPostgresUrl(setup.storeUrl)) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      "--workers 0 serves the API alone, which needs a PostgreSQL store (whose queue charter worker takes runs from); with SQLite this process executes its runs: give --workers 1 or more",
      { details: { argument: "workers", value: workers, backend: "sqlite" } },
    );
  }
  const store = await openRunStore({ url: setup.storeUrl, environment });
  try {
    const context = setup.executionContext(store);
    const onError = options.onError !== undefined ? { onError: options.onError } : {};
    let dispatcher: RunDispatcher;
    let stopDispatcher: () => Promise<void>;
    if (store.backend === "postgres") {
      // The queue is pg-boss, loaded only for a PostgreSQL store.
      const { createPgBossRunDispatcher } = await import("./workers/pg-boss-run-dispatcher.js");
      const queued = await createPgBossRunDispatcher({ context, url: setup.storeUrl, workers, ...onError });
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
        secretsKey: setup.secretsKey,
      });
      const backlog = options.backlog ?? loaded.configuration.server.listenBacklog;
      const address = await server.listen({
        host: options.host,
        port: options.port,
        ...(backlog !== undefined ? { backlog } : {}),
      });
      return {
        address,
        async close() {
          try {
            // Runs first: a request waiting for one (wait: true) is answered once it stops at its checkpoint.
            await stopDispatcher();
            await server.close();
          } finally {
            await store.close();
            // After the drain: the spans of the runs that stopped at their checkpoint are flushed too.
            await setup.telemetry?.shutdown();
          }
        },
      };
    } catch (error) {
      await stopDispatcher();
      throw error;
    }
  } catch (error) {
    await store.close();
    await setup.telemetry?.shutdown();
    throw error;
  }
}
