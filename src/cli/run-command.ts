import { CharterError } from "../foundation/charter-error.js";
import { runAgent } from "../runner/run-agent.js";
import type { CharterEvent } from "../session/charter-event.js";
import { finalReportText } from "../session/final-report.js";
import type { CliStreams } from "./cli-streams.js";
import { exitCodeForResult } from "./exit-code.js";
import { createProgressReporter } from "./progress-reporter.js";
import { runStopText } from "./run-stop-text.js";

/** `charter run <agent.md> [prompt|-]`: the report on stdout (or the whole result with --json). */
export async function runCommand(
  positionals: readonly string[],
  values: {
    config?: string;
    set?: string[];
    json?: boolean;
    stream?: boolean;
    "runs-dir"?: string;
    store?: string;
  },
  streams: CliStreams,
): Promise<number> {
  const [agentPath, promptArgument, ...extra] = positionals;
  if (agentPath === undefined) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      "charter run needs an agent file: charter run <agent.md> [prompt|-]",
      {
        details: { argument: "agent" },
      },
    );
  }
  if (extra.length > 0) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `unexpected arguments: ${extra.join(" ")} (quote the prompt)`,
      {
        details: { argument: "prompt" },
      },
    );
  }
  const prompt =
    promptArgument === undefined || promptArgument === "-" ? await readAll(streams.stdin) : promptArgument;
  if (prompt.trim() === "") {
    throw new CharterError(
      "ARGUMENT_INVALID",
      "the prompt is empty: pass it as an argument or on stdin with '-'",
      {
        details: { argument: "prompt" },
      },
    );
  }
  const progress = values.json ? undefined : createProgressReporter(streams.stderr as NodeJS.WriteStream);
  // --stream: text deltas go to stdout as they arrive; reasoning and tool calls to stderr.
  let streamedText = false;
  const onEvent =
    values.stream && !values.json
      ? (event: CharterEvent) => {
          if (event.type === "text_delta") {
            streams.stdout.write(event.text);
            streamedText = true;
          } else if (event.type === "reasoning_delta") streams.stderr.write(event.text);
          else if (event.type === "tool_call_started")
            streams.stderr.write(`\n[tool] ${event.name} ${JSON.stringify(event.arguments)}\n`);
          else if (event.type === "model_attempt_ended" && streamedText) streams.stdout.write("\n");
        }
      : undefined;
  const set = [...(values.set ?? []), ...(values.stream ? ["stream=true"] : [])];
  const result = await runAgent({
    agentPath,
    prompt,
    ...(values.config !== undefined ? { configPath: values.config } : {}),
    ...(set.length > 0 ? { set } : {}),
    ...(onEvent !== undefined ? { onEvent } : {}),
    ...(values["runs-dir"] !== undefined ? { runsDirectory: values["runs-dir"] } : {}),
    ...(values.store !== undefined ? { store: values.store } : {}),
    signal: streams.signal,
    ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
    ...(progress !== undefined ? { onTransition: progress } : {}),
  });
  if (values.json) {
    streams.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    // A text answer that was streamed is already on stdout; a report from final_report is printed whole.
    const alreadyShown = streamedText && result.finalReport?.source === "text_fallback";
    if (result.finalReport !== null && !alreadyShown)
      streams.stdout.write(`${finalReportText(result.finalReport)}\n`);
    streams.stderr.write(runStopText(result));
  }
  return exitCodeForResult(result);
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}
