import type { Counter, Histogram, Meter } from "@opentelemetry/api";

/** The metrics of a server's runs: the GenAI client metrics per model call and tool call, and runs by final state. */
export interface GenAiInstruments {
  /** `gen_ai.client.token.usage`: tokens per model call, `gen_ai.token.type` input or output. */
  readonly tokenUsage: Histogram;
  /** `gen_ai.client.operation.duration`: seconds per model call (each attempt). */
  readonly operationDuration: Histogram;
  /** `gen_ai.execute_tool.duration`: seconds per tool call. */
  readonly toolDuration: Histogram;
  /** `charter.runs`: runs whose lifecycle ended, by `charter.run.final_state` (success, error, failover). */
  readonly runs: Counter;
}

// The bucket boundaries the GenAI semantic conventions advise for these two histograms.
const tokenBuckets = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
const durationBuckets = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

export function genAiInstruments(meter: Meter): GenAiInstruments {
  return {
    tokenUsage: meter.createHistogram("gen_ai.client.token.usage", {
      unit: "{token}",
      description: "Number of input and output tokens used",
      advice: { explicitBucketBoundaries: tokenBuckets },
    }),
    operationDuration: meter.createHistogram("gen_ai.client.operation.duration", {
      unit: "s",
      description: "GenAI operation duration",
      advice: { explicitBucketBoundaries: durationBuckets },
    }),
    toolDuration: meter.createHistogram("gen_ai.execute_tool.duration", {
      unit: "s",
      description: "Duration of a tool call of a run",
      advice: { explicitBucketBoundaries: durationBuckets },
    }),
    runs: meter.createCounter("charter.runs", {
      unit: "{run}",
      description: "Runs whose lifecycle ended (COMPLETED or FAILED), by final state",
    }),
  };
}
