import { type ChildProcess, spawn } from "node:child_process";
import { charterBinary } from "../cli/cli-harness.js";

/** `charter serve` (the built CLI) as a real child process, once it has printed the address it listens on. */
export interface ServeProcess {
  readonly address: string;
  readonly child: ChildProcess;
  /** Everything it printed so far. */
  output(): { readonly stdout: string; readonly stderr: string };
  /** Sends the signal and resolves with the exit code once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `charter serve <argv>` and resolves once its stdout names the address (`listening on http://...`), or
 * rejects with its output when it exits first.
 */
export function startServeProcess(
  argv: readonly string[],
  options: { readonly cwd?: string; readonly env?: Readonly<Record<string, string | undefined>> } = {},
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [charterBinary, "serve", ...argv], {
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
  });
  let stdout = "";
  let stderr = "";
  const exited = new Promise<number | null>((resolveExit) => child.on("close", (code) => resolveExit(code)));
  return new Promise((resolveStarted, rejectStarted) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match?.[1] !== undefined) {
        resolveStarted({
          address: match[1],
          child,
          output: () => ({ stdout, stderr }),
          stop(signal = "SIGTERM") {
            child.kill(signal);
            return exited;
          },
        });
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.on("error", rejectStarted);
    void exited.then((code) =>
      rejectStarted(new Error(`charter serve exited with ${code} before listening:\n${stdout}\n${stderr}`)),
    );
  });
}
