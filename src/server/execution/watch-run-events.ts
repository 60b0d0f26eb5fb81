import { CharterError } from "../../foundation/charter-error.js";
import type { RunEventType, StoredRunEvent } from "../../store/run-event-records.js";
import { settledRunEventTypes } from "../../store/run-event-records.js";
import type { RunStore } from "../../store/run-store.js";
import type { RunEventHub } from "./run-event-hub.js";

/** How often a reader looks at the store for events stored by other processes, unless told otherwise. */
export const defaultRunEventPollMilliseconds = 1000;

export interface WatchRunEventsOptions {
  /** Only events after this number (an SSE client's `Last-Event-ID`); default 0, from the start. */
  readonly afterSequence?: number;
  /** Ends the watch (the client went away). */
  readonly signal?: AbortSignal;
  /** Events of this process, heard at once; without it (or for other processes' events) the store is polled. */
  readonly events?: RunEventHub;
  readonly pollMilliseconds?: number;
}

/**
 * A run's lifecycle events in order, live: those stored so far (after `afterSequence`), then each new one as it is
 * stored, until the run's COMPLETED or FAILED event (or the signal). Events of this process wake the reader at
 * once through the hub; events stored by another process (a worker elsewhere) are found by reading the store every
 * `pollMilliseconds`. Every read is the tenant's: another tenant's run has no events (RUN_NOT_FOUND at the start).
 */
export async function* watchRunEvents(
  store: RunStore,
  runId: string,
  options: WatchRunEventsOptions = {},
): AsyncGenerator<StoredRunEvent> {
  if ((await store.getRunRequest(runId)) === null) {
    throw new CharterError("RUN_NOT_FOUND", `no run ${runId}`, { details: { runId } });
  }
  let after = options.afterSequence ?? 0;
  for (;;) {
    if (options.signal?.aborted === true) return;
    const wake = nextWake(store.tenantId, runId, options);
    try {
      for (const event of await store.readRunEvents(runId, { afterSequence: after })) {
        after = event.sequence;
        yield event;
        if (settledRunEventTypes.includes(event.type)) return;
      }
      await wake.promise;
    } finally {
      wake.cancel();
    }
  }
}

/** Resolves when the run stops for now or for good: COMPLETED, FAILED or AWAITING_APPROVAL (or the signal aborts). */
export async function waitForRunToStop(
  store: RunStore,
  runId: string,
  options: Omit<WatchRunEventsOptions, "afterSequence"> = {},
): Promise<RunEventType | null> {
  for (;;) {
    if (options.signal?.aborted === true) return null;
    const wake = nextWake(store.tenantId, runId, options);
    try {
      const request = await store.getRunRequest(runId);
      if (request === null)
        throw new CharterError("RUN_NOT_FOUND", `no run ${runId}`, { details: { runId } });
      if (stoppedTypes.includes(request.state)) return request.state;
      await wake.promise;
    } finally {
      wake.cancel();
    }
  }
}

const stoppedTypes: readonly RunEventType[] = [...settledRunEventTypes, "AWAITING_APPROVAL"];

/** What wakes a reader: an event of the run in this process, the poll interval, or the signal. */
function nextWake(
  tenantId: string | null,
  runId: string,
  options: Omit<WatchRunEventsOptions, "afterSequence">,
): { promise: Promise<void>; cancel: () => void } {
  let cancel = () => {};
  const promise = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, options.pollMilliseconds ?? defaultRunEventPollMilliseconds);
    const unsubscribe = options.events?.subscribe(tenantId, runId, () => resolve()) ?? (() => {});
    const onAbort = () => resolve();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    cancel = () => {
      clearTimeout(timer);
      unsubscribe();
      options.signal?.removeEventListener("abort", onAbort);
    };
  });
  return { promise, cancel };
}
