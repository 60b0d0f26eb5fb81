import { CharterError } from "../foundation/charter-error.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodes } from "./exit-code.js";
import { sharedFlags } from "./shared-flags.js";

const flags = {
  host: {
    type: "string",
    valueName: "HOST",
    default: "127.0.0.1",
    description: "The address to listen on (0.0.0.0 for every interface).",
  },
  port: {
    type: "string",
    valueName: "PORT",
    default: "8787",
    description: "The TCP port to listen on (0: any free port; the address printed says which).",
  },
  workers: {
    type: "string",
    valueName: "N",
    default: "2",
    description:
      "How many runs this process executes at once; more wait in the queue, stored. 0 (PostgreSQL only): serve the API alone, charter worker executes the runs.",
  },
  backlog: {
    type: "string",
    valueName: "N",
    defaultText: "the configuration's server.listenBacklog, else 511",
    description:
      "How many connections the system queues before the server accepts them (the system caps it: net.core.somaxconn on Linux). Raise it for bursts of many simultaneous connections, which would otherwise be reset.",
  },
  config: sharedFlags.config,
  store: sharedFlags.store,
} as const;

/** `charter serve`: the HTTP API, until SIGINT or SIGTERM. */
export const serveCommand = defineCommand({
  name: "serve",
  summary: "Serve the HTTP API (runs for several tenants, with keys and roles)",
  description:
    "serve starts the HTTP API and prints the address it listens on (`charter serve: listening on http://127.0.0.1:8787`). It serves the runs API under /v1 (keys from charter keys, or JWTs), /healthz, /readyz (the run store is reachable) and the OpenAPI document at /openapi.json, and executes the runs it accepts with --workers workers (with a PostgreSQL store, through its queue, beside any charter worker). It stops on SIGINT or SIGTERM: no new runs, running turns reach their next checkpoint (the next server to start continues them), requests under way finish, exit 0.",
  positionals: [],
  flags,
  examples: [
    "charter serve",
    "charter serve --host 0.0.0.0 --port 8080 --store postgres://charter@db/charter",
    "charter serve --config server.charter.json --workers 4",
  ],
  run: serve,
});

async function serve(
  _positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const workers = Number(values.workers ?? "2");
  if (!Number.isInteger(workers) || workers < 0) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `--workers must be a whole number (0 or more), not '${values.workers}'`,
      {
        details: { argument: "workers", value: values.workers ?? null },
      },
    );
  }
  const port = Number(values.port ?? "8787");
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `--port must be a port number (0-65535), not '${values.port}'`,
      {
        details: { argument: "port", value: values.port ?? null },
      },
    );
  }
  const backlog = values.backlog === undefined ? undefined : Number(values.backlog);
  if (backlog !== undefined && (!Number.isInteger(backlog) || backlog < 1 || backlog > 2_147_483_647)) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `--backlog must be a whole number of connections (1 or more), not '${values.backlog}'`,
      { details: { argument: "backlog", value: values.backlog } },
    );
  }
  // The server (Fastify, jose...) loads only for this command, never for the others' start-up.
  const { startServer } = await import("../server/start-server.js");
  const server = await startServer({
    host: values.host ?? "127.0.0.1",
    port,
    workers,
    ...(backlog !== undefined ? { backlog } : {}),
    onError: (error) =>
      streams.stderr.write(`charter serve: ${error instanceof Error ? error.message : String(error)}\n`),
    ...(values.config !== undefined ? { configPath: values.config } : {}),
    ...(values.store !== undefined ? { store: values.store } : {}),
    ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
  });
  streams.stdout.write(`charter serve: listening on ${server.address}\n`);
  await new Promise<void>((resolveStop) => {
    if (streams.signal.aborted) resolveStop();
    else streams.signal.addEventListener("abort", () => resolveStop(), { once: true });
  });
  await server.close();
  streams.stdout.write("charter serve: stopped\n");
  return exitCodes.success;
}
