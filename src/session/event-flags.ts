import type { ObservedTimeout } from "./session-event.js";

/** The interrupt and timeout an event carried, recorded only when set (replay needs them; most entries have none). */
export function eventFlags(
  interrupted: boolean,
  timedOut: ObservedTimeout,
): { interrupted?: true; timed_out?: string } {
  if (!interrupted && timedOut === null) return {};
  return {
    ...(interrupted ? { interrupted: true as const } : {}),
    ...(timedOut !== null ? { timed_out: timedOut } : {}),
  };
}
