import { parseDuration } from "../config/parse-duration.js";
import { CharterError } from "../foundation/charter-error.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodes } from "./exit-code.js";
import { sharedFlags } from "./shared-flags.js";

const flags = {
  store: sharedFlags.store,
  config: sharedFlags.config,
  concurrency: {
    type: "string",
    valueName: "N",
    default: "2",
    description: "How many runs this worker executes at once.",
  },
  lease: {
    type: "string",
    valueName: "DURATION",
    default: "90s",
    description:
      "How long a run's worker may go without saying it is alive before another worker takes the run over (it says so three times per lease). Every worker of a store should use the same.",
  },
  poll: {
    type: "string",
    valueName: "DURATION",
    default: "1s",
    description: "How often the worker looks for queued runs, cancellations and runs to take over.",
  },
} as const;

/** `charter worker`: executes a PostgreSQL store's queued runs until SIGINT or SIGTERM. */
export const workerCommand = defineCommand({
  name: "worker",
  summary: "Execute the runs a server queued in its PostgreSQL store (any machine that reaches the database)",
  description:
    "worker takes runs that `charter serve` queued in a PostgreSQL store and executes them, --concurrency at once, with the agents and configuration found from its working directory (and --config). A run whose worker died (kill -9, a lost machine) is taken over by another worker once its lease has expired and continues from its last checkpoint: completed turns and tool calls never run again. On SIGINT or SIGTERM it stops taking runs, lets running turns reach their next checkpoint (tool calls under way finish), and exits 0; another worker continues those runs.",
  positionals: [],
  flags,
  examples: [
    "charter worker --store postgres://charter@db/charter",
    "charter worker --store postgres://charter@db/charter --concurrency 8 --config worker.charter.json",
  ],
  run: worker,
});

function durationFlag(name: string, value: string): number {
  const milliseconds = parseDuration(value);
  if (milliseconds === undefined || milliseconds <= 0) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `--${name} must be a duration such as 30s, 2m or 500ms, not '${value}'`,
      {
        details: { argument: name, value },
      },
    );
  }
  return milliseconds;
}

async function worker(
  _positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const concurrency = Number(values.concurrency ?? "2");
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `--concurrency must be a whole number of at least 1, not '${values.concurrency}'`,
      { details: { argument: "concurrency", value: values.concurrency ?? null } },
    );
  }
  const leaseMilliseconds = durationFlag("lease", values.lease ?? "90s");
  const pollMilliseconds = durationFlag("poll", values.poll ?? "1s");
  // The server's modules (pg-boss...) load only for this command, never for the others' start-up.
  const { startWorker } = await import("../server/workers/start-worker.js");
  const started = await startWorker({
    concurrency,
    leaseMilliseconds,
    pollMilliseconds,
    ...(values.config !== undefined ? { configPath: values.config } : {}),
    ...(values.store !== undefined ? { store: values.store } : {}),
    ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
    onError: (error) =>
      streams.stderr.write(`charter worker: ${error instanceof Error ? error.message : String(error)}\n`),
  });
  streams.stdout.write(`charter worker: taking runs from ${started.description}, ${concurrency} at once\n`);
  await new Promise<void>((resolveStop) => {
    if (streams.signal.aborted) resolveStop();
    else streams.signal.addEventListener("abort", () => resolveStop(), { once: true });
  });
  streams.stdout.write("charter worker: draining (running turns finish their checkpoint)\n");
  await started.stop();
  streams.stdout.write("charter worker: stopped\n");
  return exitCodes.success;
}
