import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodeForResult, exitCodes } from "./exit-code.js";
import { runObserverFlags, runObservers } from "./run-observers.js";
import { sharedFlags } from "./shared-flags.js";

const flags = {
  json: { ...sharedFlags.json, description: "Print the result and its verification as JSON." },
  "runs-dir": sharedFlags["runs-dir"],
  progress: runObserverFlags.progress,
  verbose: runObserverFlags.verbose,
} as const;

/** `charter demo`: runs the bundled agent and prints the report, outcome, accounting and verification. */
export const demoCommand = defineCommand({
  name: "demo",
  summary: "Run the bundled demo agent (no API key needed) and verify its transcript",
  description:
    "Runs a bundled agent against a scripted model and a bundled tool server, then prints its report, outcome, accounting and transcript verification: a check that the installation works.",
  positionals: [],
  flags,
  examples: ["charter demo", "charter demo --json --runs-dir /tmp/charter-runs"],
  run: (_positionals, values, streams) => runTheDemo(values, streams),
});

async function runTheDemo(values: FlagValues<typeof flags>, streams: CliStreams): Promise<number> {
  const { runDemo } = await import("../demo/run-demo.js");
  const { finalReportText } = await import("../session/final-report.js");
  const { onTransition: progress } = runObservers(values, streams);
  const { result, verification } = await runDemo({
    ...(values["runs-dir"] !== undefined ? { runsDirectory: values["runs-dir"] } : {}),
    signal: streams.signal,
    ...(progress !== undefined ? { onTransition: progress } : {}),
  });
  if (values.json) {
    streams.stdout.write(`${JSON.stringify({ result, verification })}\n`);
  } else {
    const out = streams.stdout;
    out.write("== Report ==\n");
    out.write(`${result.finalReport === null ? "(none)" : finalReportText(result.finalReport)}\n\n`);
    out.write("== Outcome ==\n");
    out.write(`${result.outcome} (success: ${result.success}) in ${result.turns} turns\n`);
    if (result.error !== null) out.write(`error: ${result.error.code}: ${result.error.message}\n`);
    out.write("\n== Accounting ==\n");
    for (const entry of result.accounting) {
      if (entry.type === "llm") {
        out.write(
          `llm   ${entry.provider}/${entry.model} ${entry.status} ${entry.latency.toFixed(0)} ms, tokens in ${entry.tokens.input} out ${entry.tokens.output}\n`,
        );
      } else {
        out.write(
          `tool  ${entry.mcpServer}/${entry.command} ${entry.status} ${entry.latency.toFixed(0)} ms, chars in ${entry.charactersIn} out ${entry.charactersOut}\n`,
        );
      }
    }
    out.write(`total tokens: in ${result.tokens.input}, out ${result.tokens.output}\n`);
    out.write("\n== Transcript ==\n");
    out.write(
      `run ${result.runId}: ${result.transcript.entries} entries, head ${result.transcript.headHash}\n`,
    );
    out.write(`directory: ${result.transcript.directory}\n`);
    if (verification === null) out.write("verify: no transcript\n");
    else if (verification.ok)
      out.write(`verify: OK (${verification.entries} entries, chain and contract hash intact)\n`);
    else
      out.write(
        `verify: FAILED at entry ${verification.first_bad_entry?.seq}: ${verification.first_bad_entry?.reason_code}\n`,
      );
  }
  const code = exitCodeForResult(result);
  return code === exitCodes.success && verification !== null && !verification.ok
    ? exitCodes.sessionFailure
    : code;
}
