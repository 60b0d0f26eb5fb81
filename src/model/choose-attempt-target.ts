import { targetIndexForAttempt } from "./target-rotation.js";

export interface AttemptTargetFacts {
  readonly targetCount: number;
  /** The attempt within the turn, 1-based. */
  readonly attempt: number;
  /** Target index -> epoch milliseconds until which that target is rate-limited. */
  readonly limitedUntil: ReadonlyMap<number, number>;
  readonly now: number;
}

export interface AttemptTarget {
  readonly targetIndex: number;
  /** How long to wait before sending: 0 unless every target is rate-limited. */
  readonly waitMilliseconds: number;
}

/**
 * The target of the next attempt and how long to wait first (seed 000 §5 and issue 2: rate limits honour
 * Retry-After "and move to the next target, waiting only when every target is rate-limited"). Rotation starts at
 * `targets[(N - 1) % n]` and takes the first target in order from there that is not inside its rate-limit window,
 * so a limited target is never called early while another one is free. When every target is limited, the one whose
 * window ends first is chosen (the earliest in rotation order on a tie) and the attempt waits until then.
 */
export function chooseAttemptTarget(facts: AttemptTargetFacts): AttemptTarget {
  const { targetCount, limitedUntil, now } = facts;
  const start = targetIndexForAttempt(targetCount, facts.attempt);
  let soonest = start;
  let soonestUntil = Number.POSITIVE_INFINITY;
  for (let offset = 0; offset < targetCount; offset++) {
    const index = (start + offset) % targetCount;
    const until = limitedUntil.get(index);
    if (until === undefined || until <= now) return { targetIndex: index, waitMilliseconds: 0 };
    if (until < soonestUntil) {
      soonest = index;
      soonestUntil = until;
    }
  }
  return { targetIndex: soonest, waitMilliseconds: soonestUntil - now };
}
