import { spawn } from "node:child_process";

/**
 * Runs `node <args>` as a real child process and resolves once it exits, with its exit code and whole output.
 * `cwd` and `env` (added to this process's environment) default to this process's.
 */
export function nodeProcess(
  args: readonly string[],
  options: { readonly cwd?: string; readonly env?: Readonly<Record<string, string | undefined>> } = {},
): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolveExit, rejectExit) => {
    child.on("error", rejectExit);
    child.on("close", (exitCode) => resolveExit({ exitCode, stdout, stderr }));
  });
}
