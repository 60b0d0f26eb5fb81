import { spawn } from "node:child_process";

/** What a shell command did: its exit, its combined output (bounded) and whether it ran out of time. */
export interface ShellCommandResult {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly output: string;
  readonly truncated: boolean;
  readonly timedOut: boolean;
}

/**
 * Runs `sh -c command` in `cwd` as its own process group, so that a timeout or an abort ends everything it
 * started. Standard output and error are kept together, in order, up to `maxOutputBytes` (the rest is counted,
 * not kept).
 */
export function runShellCommand(
  command: string,
  options: {
    readonly cwd: string;
    readonly timeoutMs: number;
    readonly maxOutputBytes: number;
    readonly signal?: AbortSignal;
  },
): Promise<ShellCommandResult> {
  return new Promise((resolveCommand) => {
    const child = spawn("sh", ["-c", command], {
      cwd: options.cwd,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    const keep = (chunk: Buffer) => {
      const room = options.maxOutputBytes - kept;
      if (room <= 0) {
        truncated = true;
        return;
      }
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      if (part.length < chunk.length) truncated = true;
      chunks.push(part);
      kept += part.length;
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    options.signal?.addEventListener("abort", killGroup, { once: true });
    const finish = (exitCode: number | null, signal: string | null) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", killGroup);
      let output = Buffer.concat(chunks).toString("utf8");
      if (truncated) output += `\n[output truncated at ${options.maxOutputBytes} bytes]`;
      resolveCommand({ exitCode, signal, output, truncated, timedOut });
    };
    child.on("error", (error) => {
      chunks.push(Buffer.from(String(error)));
      finish(null, null);
    });
    child.on("close", (code, signal) => finish(code, signal));
  });
}
