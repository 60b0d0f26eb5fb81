import { randomUUID } from "node:crypto";

/**
 * The one seam through which Charter reads time, makes ids and draws randomness.
 * Tests inject a deterministic environment; production uses `systemEnvironment`.
 */
export interface RuntimeEnvironment {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Monotonic milliseconds, for measuring latency. */
  monotonicNow(): number;
  /** A new unique id with the given prefix (for example `run`, `call`, `txn`). */
  newId(prefix: string): string;
  /** A number in [0, 1), for jitter. */
  random(): number;
  /** Waits for the given milliseconds, or until the signal aborts. */
  sleep(milliseconds: number, signal?: AbortSignal): Promise<void>;
  /** How often a running run's process records that it is alive (default 30 s). */
  readonly heartbeatIntervalMilliseconds?: number;
}

export const systemEnvironment: RuntimeEnvironment = {
  now: () => Date.now(),
  monotonicNow: () => performance.now(),
  newId: (prefix) => `${prefix}_${randomUUID().replaceAll("-", "")}`,
  random: () => Math.random(),
  sleep: (milliseconds, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, milliseconds);
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      }
      signal?.addEventListener("abort", done, { once: true });
    }),
};

/**
 * A deterministic environment: a manual clock that `sleep` advances instantly, sequential ids, seeded randomness.
 * Used by tests and by replay.
 */
export function deterministicEnvironment(
  options: { start?: number; seed?: number } = {},
): RuntimeEnvironment & {
  advance(milliseconds: number): void;
  slept: number[];
} {
  let clock = options.start ?? Date.UTC(2026, 0, 1);
  let monotonic = 0;
  let seed = options.seed ?? 42;
  const counters = new Map<string, number>();
  const slept: number[] = [];
  return {
    slept,
    now: () => clock,
    monotonicNow: () => monotonic,
    newId(prefix) {
      const next = (counters.get(prefix) ?? 0) + 1;
      counters.set(prefix, next);
      return `${prefix}_${String(next).padStart(4, "0")}`;
    },
    random() {
      // mulberry32: small, seeded, good enough for jitter.
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
    async sleep(milliseconds) {
      slept.push(milliseconds);
      clock += milliseconds;
      monotonic += milliseconds;
    },
    advance(milliseconds) {
      clock += milliseconds;
      monotonic += milliseconds;
    },
  };
}
