import { CharterError } from "../foundation/charter-error.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodes } from "./exit-code.js";
import { openCliStore } from "./open-cli-store.js";
import { sharedFlags } from "./shared-flags.js";

const flags = {
  port: {
    type: "string",
    valueName: "PORT",
    default: "8788",
    description: "The TCP port on 127.0.0.1 (0: any free port; the address printed says which).",
  },
  store: sharedFlags.store,
  config: sharedFlags.config,
  tenant: sharedFlags.tenant,
} as const;

/** `charter view`: the run viewer over a local run store, read-only, until SIGINT or SIGTERM. */
export const viewCommand = defineCommand({
  name: "view",
  summary: "Watch the runs of a local run store in the browser (read-only)",
  description:
    "view serves the run viewer (the web page of charter serve) for a local run store on 127.0.0.1, read-only: runs, timelines, reports, contracts, transcript verification, workflows, work items and statistics, nothing that starts, cancels or approves a run. It prints an address with a one-time sign-in token: open it in a browser (the token is spent by the first visit). The store is chosen as charter run chooses it; --tenant shows that tenant's runs (none: the runs stored without a tenant). It stops on SIGINT or SIGTERM.",
  positionals: [],
  flags,
  examples: ["charter view", "charter view --store postgres://charter@db/charter --tenant acme --port 9000"],
  run: view,
});

async function view(
  _positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const port = Number(values.port ?? "8788");
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `--port must be a port number (0-65535), not '${values.port}'`,
      {
        details: { argument: "port", value: values.port ?? null },
      },
    );
  }
  const store = await openCliStore(values, streams);
  // The server (Fastify...) loads only for this command, never for the others' start-up.
  const { startViewer } = await import("../server/start-viewer.js");
  const viewer = await startViewer({ store, port, tenantLabel: values.tenant ?? "default tenant" });
  streams.stdout.write(
    `charter view: listening on ${viewer.address}\ncharter view: open ${viewer.signInUrl}\n`,
  );
  await new Promise<void>((resolveStop) => {
    if (streams.signal.aborted) resolveStop();
    else streams.signal.addEventListener("abort", () => resolveStop(), { once: true });
  });
  await viewer.close();
  await store.close();
  streams.stdout.write("charter view: stopped\n");
  return exitCodes.success;
}
