import type { ConformanceMetrics } from "../conformance/conformance-metrics.js";
import type { ConformanceCaseRun, ConformanceReport } from "../conformance/run-conformance-corpus.js";
import { CharterError } from "../foundation/charter-error.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodes } from "./exit-code.js";
import { sharedFlags } from "./shared-flags.js";

function parseRepeat(text: string | undefined): number {
  if (text === undefined) return 1;
  const repeat = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(repeat) || repeat < 1) {
    throw new CharterError("ARGUMENT_INVALID", `--repeat takes a whole number of at least 1, not '${text}'`, {
      details: { option: "repeat", value: text },
    });
  }
  return repeat;
}

function runLine(run: ConformanceCaseRun): string {
  const verdict = run.passed ? "PASS" : "FAIL";
  const did = run.inferences.length === 0 ? "no model answer" : run.inferences.join("; ");
  const expected =
    run.outcome === run.expectedOutcome ? "" : ` (the contract prescribes ${run.expectedOutcome})`;
  const lines = [
    `${verdict}  ${run.case} #${run.repetition}: ${run.title}`,
    `      the model: ${run.behaviour} (${did})`,
    `      outcome:   ${run.outcome}${expected}`,
    ...run.problems.map((problem) => `      problem:   ${problem}`),
  ];
  return `${lines.join("\n")}\n`;
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1)} %`;
}

function seconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(2)} s`;
}

function metricsText(metrics: ConformanceMetrics): string {
  return [
    `Baseline over ${metrics.runs} run(s):`,
    `  no-tool-call rate (runs that require a tool)  ${percent(metrics.noToolCallRate)}`,
    `  parse-failure rate (model attempts)           ${percent(metrics.parseFailureRate)}`,
    `  model attempts per run                        average ${metrics.inferencesPerRun.average.toFixed(2)}, p95 ${metrics.inferencesPerRun.p95}`,
    `  duration per run                              average ${seconds(metrics.durationMs.average)}, p95 ${seconds(metrics.durationMs.p95)}`,
    `  budget-exhausted exits                        ${metrics.budgetExhaustedExits}`,
  ].join("\n");
}

function summaryText(report: ConformanceReport): string {
  const passed = report.runs.filter((run) => run.passed).length;
  return `${passed} of ${report.runs.length} run(s) passed: ${report.passed ? "conformant" : "NOT conformant"}`;
}

const flags = {
  model: {
    type: "string",
    valueName: "PROVIDER/MODEL",
    description: "The model to check: a provider/model the configuration defines (required).",
  },
  config: sharedFlags.config,
  repeat: {
    type: "string",
    valueName: "N",
    default: "1",
    description: "Run the six cases N times; the baseline metrics are computed over every run.",
  },
  json: { ...sharedFlags.json, description: "Print the whole report as one JSON document." },
} as const;

/** `charter conformance`: the conformance corpus against a real endpoint, judged by what the model did. */
export const conformanceCommand = defineCommand({
  name: "conformance",
  summary: "Check a model endpoint against the execution contract (six cases, baseline metrics)",
  description:
    "Runs six cases against the model with tools built into Charter: a required tool called properly, malformed tool calls, narration instead of a call, a call while tools are forbidden, an oversized tool output, a tool call that times out. A real model cannot be made to misbehave on cue, so each run passes when Charter's outcome is the one the contract prescribes for what the model actually did and the transcript's invariants hold. Prints per case what the model did, the outcome and PASS or FAIL, then the baseline metrics (no-tool-call rate, parse-failure rate, average and p95 model calls and duration per run, budget-exhausted exits). Exit 0 when every run passed, 1 otherwise.",
  positionals: [],
  flags,
  examples: [
    "charter conformance --config .charter.json --model openai/gpt-4o-mini",
    "charter conformance --model ollama/qwen3:8b --repeat 5 --json   # the report as JSON",
  ],
  run: runConformanceCommand,
});

async function runConformanceCommand(
  positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  if (positionals.length > 0) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `charter conformance takes no arguments, got '${positionals[0]}'`,
      {
        details: { argument: positionals[0] },
      },
    );
  }
  if (values.model === undefined) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      "charter conformance needs --model provider/model (a model the configuration defines)",
      { details: { option: "model" } },
    );
  }
  const repeat = parseRepeat(values.repeat);
  const json = values.json === true;
  const { runConformance } = await import("../conformance/run-conformance.js");
  if (!json) streams.stdout.write(`charter conformance: ${values.model}, 6 cases x ${repeat}\n\n`);
  const report = await runConformance({
    model: values.model,
    repeat,
    signal: streams.signal,
    ...(values.config !== undefined ? { configPath: values.config } : {}),
    ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
    ...(json ? {} : { onRun: (run: ConformanceCaseRun) => streams.stdout.write(runLine(run)) }),
  });
  if (json) streams.stdout.write(`${JSON.stringify(report)}\n`);
  else streams.stdout.write(`\n${metricsText(report.metrics)}\n\n${summaryText(report)}\n`);
  return report.passed ? exitCodes.success : exitCodes.sessionFailure;
}
