import type { StoredRunEvent } from "../../store/run-event-records.js";

export type RunEventListener = (event: StoredRunEvent) => void;

/**
 * Tells listeners in this process of each lifecycle event as soon as it is stored, by tenant and run: what a live
 * event stream waits on instead of polling. Events stored by another process (a worker on another machine) are not
 * seen here; readers find those by reading the store (see watchRunEvents).
 */
export interface RunEventHub {
  publish(event: StoredRunEvent): void;
  /** Calls `listener` with each event of the run published from now on; returns what stops it. */
  subscribe(tenantId: string | null, runId: string, listener: RunEventListener): () => void;
}

export function createRunEventHub(): RunEventHub {
  const listeners = new Map<string, Set<RunEventListener>>();
  // The tenant is part of the key: a listener of one tenant's run never hears of another tenant's run of that id.
  const keyOf = (tenantId: string | null, runId: string) => JSON.stringify([tenantId, runId]);
  return {
    publish(event) {
      for (const listener of [...(listeners.get(keyOf(event.tenantId, event.runId)) ?? [])]) {
        try {
          listener(event);
        } catch {
          // One listener's failure is its own: the others and the run go on.
        }
      }
    },
    subscribe(tenantId, runId, listener) {
      const key = keyOf(tenantId, runId);
      let set = listeners.get(key);
      if (set === undefined) {
        set = new Set();
        listeners.set(key, set);
      }
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(key);
      };
    },
  };
}
