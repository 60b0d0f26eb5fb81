/** One run as the baseline metrics count it. */
export interface MeasuredRun {
  readonly requiredPolicy: boolean;
  /** True when the model made no call of one of the agent's tools that executed. */
  readonly noToolCall: boolean;
  readonly inferences: number;
  readonly malformedInferences: number;
  readonly durationMs: number;
  readonly budgetExhausted: boolean;
}

/** The baseline metrics over every run of a conformance pass. */
export interface ConformanceMetrics {
  readonly runs: number;
  /** Of the runs whose contract requires a tool, the share in which no tool of the agent executed (0..1). */
  readonly noToolCallRate: number;
  /** Of all model attempts, the share whose tool-call output could not be parsed (0..1). */
  readonly parseFailureRate: number;
  readonly inferencesPerRun: { readonly average: number; readonly p95: number };
  readonly durationMs: { readonly average: number; readonly p95: number };
  /** Runs that ended FAILED_BUDGET_EXHAUSTED (turns, attempts or tokens ran out). */
  readonly budgetExhaustedExits: number;
}

function average(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** The nearest-rank 95th percentile: the smallest value at least 95 % of the values do not exceed. */
function percentile95(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(0.95 * sorted.length) - 1]!;
}

function ratio(part: number, whole: number): number {
  return whole === 0 ? 0 : part / whole;
}

export function computeConformanceMetrics(runs: readonly MeasuredRun[]): ConformanceMetrics {
  const required = runs.filter((run) => run.requiredPolicy);
  const inferences = runs.map((run) => run.inferences);
  const durations = runs.map((run) => run.durationMs);
  return {
    runs: runs.length,
    noToolCallRate: ratio(required.filter((run) => run.noToolCall).length, required.length),
    parseFailureRate: ratio(
      runs.reduce((sum, run) => sum + run.malformedInferences, 0),
      runs.reduce((sum, run) => sum + run.inferences, 0),
    ),
    inferencesPerRun: { average: average(inferences), p95: percentile95(inferences) },
    durationMs: { average: average(durations), p95: percentile95(durations) },
    budgetExhaustedExits: runs.filter((run) => run.budgetExhausted).length,
  };
}
