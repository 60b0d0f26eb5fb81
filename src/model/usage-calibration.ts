const minimumRatio = 0.5;
const maximumRatio = 2;

/**
 * Corrects token estimates by the provider's reported usage: remembers the ratio between the input
 * tokens the provider reported for a request and our estimate of the same request, and scales later
 * estimates by it. The ratio is clamped to [0.5, 2] so that one odd report (a cached prompt, a provider
 * counting differently) cannot make the context guard wildly optimistic or pessimistic.
 */
export class UsageCalibration {
  #ratio = 1;

  /** The current correction factor (1 until a usable report arrived). */
  get ratio(): number {
    return this.#ratio;
  }

  /** Records one request's estimate and the provider's reported input tokens for it. */
  observe(estimatedInputTokens: number, reportedInputTokens: number): void {
    if (!(estimatedInputTokens > 0) || !(reportedInputTokens > 0)) return;
    if (!Number.isFinite(estimatedInputTokens) || !Number.isFinite(reportedInputTokens)) return;
    this.#ratio = Math.min(maximumRatio, Math.max(minimumRatio, reportedInputTokens / estimatedInputTokens));
  }

  /** An estimate corrected by the last observed ratio, rounded up. */
  apply(estimatedTokens: number): number {
    return Math.ceil(estimatedTokens * this.#ratio);
  }
}
