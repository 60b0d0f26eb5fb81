import { CharterError } from "../foundation/charter-error.js";

/** Gives a slot back; calling it again does nothing. */
export type ToolQueueRelease = () => void;

/**
 * A named bound on concurrent tool executions (`queues.<name>.concurrent`). Slots are granted in arrival
 * order. A waiter whose signal aborts leaves the line at once and never gets a slot.
 */
export interface ToolQueue {
  readonly name: string;
  readonly concurrent: number;
  /** Slots held now. */
  readonly running: number;
  /** Calls waiting for a slot now. */
  readonly waiting: number;
  /** A slot at once if one is free and nobody waits, otherwise `null` (and no place in line). */
  tryAcquire(): ToolQueueRelease | null;
  /** Resolves with the slot's release once one is free, or with `null` if `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<ToolQueueRelease | null>;
}

interface Waiter {
  readonly signal: AbortSignal;
  readonly grant: (release: ToolQueueRelease | null) => void;
  readonly onAbort: () => void;
}

export function createToolQueue(name: string, concurrent: number): ToolQueue {
  if (!Number.isSafeInteger(concurrent) || concurrent < 1) {
    throw new CharterError(
      "CONFIGURATION_INVALID",
      `queue '${name}': concurrent must be a positive integer`,
      {
        details: { queue: name, concurrent },
      },
    );
  }
  let running = 0;
  const line: Waiter[] = [];

  function slot(): ToolQueueRelease {
    running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      running--;
      grantWaiting();
    };
  }

  function grantWaiting(): void {
    while (running < concurrent && line.length > 0) {
      const waiter = line.shift() as Waiter;
      waiter.signal.removeEventListener("abort", waiter.onAbort);
      waiter.grant(slot());
    }
  }

  return {
    name,
    concurrent,
    get running() {
      return running;
    },
    get waiting() {
      return line.length;
    },
    tryAcquire() {
      return running < concurrent && line.length === 0 ? slot() : null;
    },
    acquire(signal) {
      if (signal.aborted) return Promise.resolve(null);
      if (running < concurrent && line.length === 0) return Promise.resolve(slot());
      return new Promise((resolve) => {
        const waiter: Waiter = {
          signal,
          grant: resolve,
          onAbort: () => {
            const index = line.indexOf(waiter);
            if (index !== -1) line.splice(index, 1);
            resolve(null);
          },
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
        line.push(waiter);
      });
    },
  };
}
