import { dirname } from "node:path";
import { runCli } from "./run-cli.js";

/**
 * Binds the CLI to the process: arguments, standard streams, signals and the exit code. Everything testable
 * lives in run-cli.ts; main.ts calls this once it has checked that the Node version can run Charter.
 */
export async function startCli(): Promise<void> {
  const controller = new AbortController();
  process.once("SIGINT", () => controller.abort());
  process.once("SIGTERM", () => controller.abort());
  // The binary directory is that of the path this script was started by, as given (Node makes it absolute but
  // keeps symlinks): for the npm bin link `node_modules/.bin/charter` or `/usr/local/bin/charter`, the link's
  // directory; for `node dist/cli/main.js`, `dist/cli`. So a symlinked `charter` can carry its own configuration.
  const script = process.argv[1];
  process.exitCode = await runCli(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    signal: controller.signal,
    ...(script !== undefined ? { binaryDirectory: dirname(script) } : {}),
  });
}
