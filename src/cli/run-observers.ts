import type { SecretRedactor } from "../foundation/secret-redactor.js";
import type { RunAgentOptions } from "../runner/run-agent.js";
import type { CliStreams } from "./cli-streams.js";
import { colourWanted, createProgressReporter, progressWanted } from "./progress-reporter.js";

/** The flags of `run` and `resume` (and `demo`, the first two) that decide what stderr shows while a run goes on. */
export const runObserverFlags = {
  progress: {
    type: "boolean",
    default: false,
    description:
      "Print progress lines on stderr even when it is not a terminal (each turn, retries and fallbacks, each tool call with its status and duration, a summary).",
  },
  verbose: {
    type: "boolean",
    default: false,
    description:
      "Also print each model request and response and each tool call's arguments and result preview (redacted).",
  },
  "trace-llm": {
    type: "boolean",
    default: false,
    description: "Print the raw HTTP traffic with the model endpoints on stderr (redacted).",
  },
  "trace-mcp": {
    type: "boolean",
    default: false,
    description: "Print the raw JSON-RPC messages to and from the MCP servers on stderr (redacted).",
  },
} as const;

export interface RunObserverFlags {
  readonly json?: boolean;
  readonly progress?: boolean;
  readonly verbose?: boolean;
  readonly "trace-llm"?: boolean;
  readonly "trace-mcp"?: boolean;
}

/**
 * The runner options behind `--progress`, `--verbose`, `--trace-llm` and `--trace-mcp` (and progress on a
 * terminal): each writes to stderr, and everything it writes passes the run's own secret redactor.
 */
export function runObservers(
  flags: RunObserverFlags,
  streams: CliStreams,
  environment: Readonly<Record<string, string | undefined>> = process.env,
  /** Also told the run's redactor, for what the command prints itself (`--stream`'s tool calls). */
  onRedactor?: (redactor: SecretRedactor) => void,
): Pick<RunAgentOptions, "onTransition" | "onSecretRedactor" | "traceModelHttp" | "traceMcp" | "onWarning"> {
  const stderr = streams.stderr as CliStreams["stderr"] & { hasColors?: () => boolean };
  let redactor: SecretRedactor | null = null;
  const redact = (text: string) => (redactor === null ? text : redactor.redactString(text));
  const write = (text: string) => {
    stderr.write(text);
  };
  const options: Pick<
    RunAgentOptions,
    "onTransition" | "onSecretRedactor" | "traceModelHttp" | "traceMcp" | "onWarning"
  > = {
    onSecretRedactor: (runRedactor) => {
      redactor = runRedactor;
      onRedactor?.(runRedactor);
    },
    // Always shown, whatever else stderr shows (with --json too): it says something was left out of the run.
    onWarning: (text) =>
      write(`${redact(`charter: warning: ${text}`)}
`),
    ...(progressWanted(stderr, flags)
      ? {
          onTransition: createProgressReporter({
            write,
            colour: colourWanted(stderr, environment),
            verbose: flags.verbose === true,
            redact,
            now: () => performance.now(),
          }),
        }
      : {}),
    ...(flags["trace-llm"] === true ? { traceModelHttp: (text: string) => write(`charter: ${text}\n`) } : {}),
    ...(flags["trace-mcp"] === true ? { traceMcp: (text: string) => write(`charter: ${text}\n`) } : {}),
  };
  return options;
}
