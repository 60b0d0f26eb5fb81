import type { RunStore } from "../store/run-store.js";
import { createServer } from "./create-server.js";
import { createLocalViewerSessions } from "./identity/local-viewer-sessions.js";

export interface StartedViewer {
  /** Where it listens (`http://127.0.0.1:8788`). */
  readonly address: string;
  /** The address to open: it carries the one-time sign-in token. */
  readonly signInUrl: string;
  close(): Promise<void>;
}

/**
 * `charter view`: the run viewer over a local run store, read-only, on 127.0.0.1 only. `store` is already scoped
 * to the tenant to show; every tenant the API would ask for is that one (the person at this machine reads their
 * own store, with no keys in it). Nothing that changes a run is registered; the page signs in with the one-time
 * token in `signInUrl`.
 */
export async function startViewer(options: {
  readonly store: RunStore;
  readonly port: number;
  /** The tenant shown in the page; the store's own scope decides what is read. */
  readonly tenantLabel: string;
}): Promise<StartedViewer> {
  const scoped = options.store;
  const store = new Proxy(scoped, {
    get(target, property, receiver) {
      if (property === "forTenant") return () => scoped;
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const sessions = createLocalViewerSessions({ tenantLabel: options.tenantLabel });
  const server = await createServer({
    store,
    readOnly: true,
    localViewer: sessions,
    // One person's browser polling their own store: the limits meant for a shared server would only get in the
    // way, and counting requests would write counters into a store opened to be read.
    limitRequests: false,
  });
  const address = await server.listen({ host: "127.0.0.1", port: options.port });
  return {
    address,
    signInUrl: `${address}/?token=${sessions.oneTimeToken}`,
    close: () => server.close(),
  };
}
