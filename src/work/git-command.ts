import { spawn } from "node:child_process";
import { CharterError } from "../foundation/charter-error.js";

export interface GitCommandOptions {
  /** The working tree the command runs in. */
  readonly cwd: string;
  /** Variables added to the environment (GIT_INDEX_FILE for a temporary index, say). */
  readonly env?: Readonly<Record<string, string>>;
  /** Bytes written to the command's standard input. */
  readonly input?: string | Buffer;
  /** Exit codes that are answers rather than failures (1 from `git diff --quiet`, say). */
  readonly acceptedExitCodes?: readonly number[];
}

// Settings that would make a snapshot differ from the bytes on disk or depend on the user's set-up: no
// line-ending conversion, no pager, no prompt, no optional locks that would touch the user's index.
const fixedSettings = [
  "-c",
  "core.autocrlf=false",
  "-c",
  "core.safecrlf=false",
  "-c",
  "core.quotePath=false",
];

/**
 * Runs the real `git` command (never a library) and resolves with its standard output as bytes. A failure is
 * WORK_GIT_FAILED naming the command, its exit code and its standard error.
 */
export async function gitCommand(
  args: readonly string[],
  options: GitCommandOptions,
): Promise<{ stdout: Buffer; exitCode: number }> {
  const out: Buffer[] = [];
  const exitCode = await gitCommandStreaming(args, options, (chunk) => out.push(chunk));
  return { stdout: Buffer.concat(out), exitCode };
}

/**
 * `gitCommand` with the standard output handed over chunk by chunk as it arrives (a whole repository's blobs
 * need not be held at once); resolves with the exit code.
 */
export function gitCommandStreaming(
  args: readonly string[],
  options: GitCommandOptions,
  onStdout: (chunk: Buffer) => void,
): Promise<number> {
  return new Promise((resolveCommand, rejectCommand) => {
    const child = spawn("git", [...fixedSettings, ...args], {
      cwd: options.cwd,
      env: {
        ...process.env,
        GIT_TERMINAL_PROMPT: "0",
        GIT_OPTIONAL_LOCKS: "0",
        LC_ALL: "C",
        ...options.env,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const err: Buffer[] = [];
    let failure: unknown = null;
    child.stdout.on("data", (chunk: Buffer) => {
      if (failure !== null) return;
      try {
        onStdout(chunk);
      } catch (error) {
        // The reader could not use what git wrote: stop git, and report the reader's error.
        failure = error;
        child.kill();
      }
    });
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (error) =>
      rejectCommand(
        new CharterError("WORK_GIT_FAILED", `git could not be started: ${error.message}; install git`, {
          details: { command: ["git", ...args].join(" ") },
          cause: error,
        }),
      ),
    );
    child.on("close", (code) => {
      if (failure !== null) {
        rejectCommand(failure);
        return;
      }
      const exitCode = code ?? -1;
      if (exitCode === 0 || (options.acceptedExitCodes ?? []).includes(exitCode)) {
        resolveCommand(exitCode);
        return;
      }
      const stderr = Buffer.concat(err).toString("utf8").trim();
      rejectCommand(
        new CharterError("WORK_GIT_FAILED", `git ${args[0] ?? ""} failed (exit ${exitCode}): ${stderr}`, {
          details: { command: ["git", ...args].join(" "), cwd: options.cwd, exitCode, stderr },
        }),
      );
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? "");
  });
}

/** The command's standard output as text without its final newline. */
export async function gitText(args: readonly string[], options: GitCommandOptions): Promise<string> {
  return (await gitCommand(args, options)).stdout.toString("utf8").replace(/\n$/, "");
}
