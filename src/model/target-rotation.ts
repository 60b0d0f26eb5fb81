import { CharterError } from "../foundation/charter-error.js";

/**
 * The target an attempt uses (seed 000 §5): attempts cycle through the provider/model targets
 * round-robin, attempt N (1-based) using `targets[(N - 1) % targets.length]`.
 */
export function targetIndexForAttempt(targetCount: number, attempt: number): number {
  if (!Number.isInteger(targetCount) || targetCount < 1 || !Number.isInteger(attempt) || attempt < 1) {
    throw new CharterError(
      "INTERNAL_ERROR",
      `targetIndexForAttempt needs a positive target count and a 1-based attempt, got ${targetCount} and ${attempt}`,
      { details: { targetCount, attempt } },
    );
  }
  return (attempt - 1) % targetCount;
}
