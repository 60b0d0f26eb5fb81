import { resolve } from "node:path";
import { loadConfiguration } from "../config/load-configuration.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { selectRunStore } from "../runner/select-run-store.js";
import { openRunStore } from "../store/open-run-store.js";
import { createServer } from "./create-server.js";

export interface StartServerOptions {
  readonly host: string;
  readonly port: number;
  /** `--config FILE`, layered over the configuration files found from `cwd`. */
  readonly configPath?: string;
  /** `--store URL`: wins over the configuration's store. */
  readonly store?: string;
  readonly cwd?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly environment?: RuntimeEnvironment;
}

export interface StartedServer {
  /** Where it listens: `http://127.0.0.1:8787`. */
  readonly address: string;
  /** Stops taking requests, waits for those under way, then closes the store. */
  close(): Promise<void>;
}

/**
 * `charter serve`: loads the configuration as `charter run` does, opens the run store (chosen by the same rule),
 * builds the server and listens.
 */
export async function startServer(options: StartServerOptions): Promise<StartedServer> {
  const environment = options.environment ?? systemEnvironment;
  const cwd = options.cwd ?? process.cwd();
  const loaded = await loadConfiguration({
    ...(options.configPath !== undefined ? { configPath: resolve(cwd, options.configPath) } : {}),
    cwd,
    ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
  });
  const location = await selectRunStore({
    store: options.store,
    configured: loaded.configuration.store,
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
  });
  const store = await openRunStore({ ...location, environment });
  try {
    const server = await createServer({ store, environment });
    const address = await server.listen({ host: options.host, port: options.port });
    return {
      address,
      async close() {
        try {
          await server.close();
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
