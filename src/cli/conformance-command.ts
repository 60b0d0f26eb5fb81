import type { ConformanceMetrics } from "../conformance/conformance-metrics.js";
import type { ConformanceCaseRun, ConformanceReport } from "../conformance/run-conformance-corpus.js";
import { runConformance } from "../conformance/run-conformance.js";
import { CharterError } from "../foundation/charter-error.js";
import type { CliStreams } from "./cli-streams.js";
import { exitCodes } from "./exit-code.js";

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
  const expected = run.outcome === run.expectedOutcome ? "" : ` (the contract prescribes ${run.expectedOutcome})`;
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

/**
 * `charter conformance --model provider/model [--config FILE] [--repeat N] [--json]`: runs the conformance corpus
 * against a real endpoint. Prints each run as it ends (what the model did, the outcome, pass or fail), then the
 * baseline metrics; `--json` prints only the report. Exit 0 when every run passed, 1 otherwise.
 */
export async function conformanceCommand(
  positionals: readonly string[],
  values: { config?: string; model?: string; repeat?: string; json?: boolean },
  streams: CliStreams,
): Promise<number> {
  if (positionals.length > 0) {
    throw new CharterError("ARGUMENT_INVALID", `charter conformance takes no arguments, got '${positionals[0]}'`, {
      details: { argument: positionals[0] },
    });
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
