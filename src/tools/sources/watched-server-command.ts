/**
 * How long the watchdog lets a server finish on its own once Charter has closed its stdin (or died), before it
 * sends SIGTERM to the server's process group; and how long after SIGTERM it sends SIGKILL. Their sum, about three
 * seconds, bounds how long a server that ignores both can outlive Charter.
 */
export const watchdogGraceMs = 2000;
export const watchdogKillAfterMs = 1000;

/**
 * The watchdog, run by the same Node as Charter (`node -e`). It starts the server in a process group of its own,
 * relays its own stdin to the server's (the server writes straight to Charter's stdout and stderr pipes), and:
 * - when its stdin ends, which happens when Charter closes it or when Charter dies in any way (kill -9 included:
 *   the kernel closes the pipe), gives the server `grace` ms, then SIGTERM to the group, then SIGKILL;
 * - on SIGTERM (the MCP SDK's second step of closing), does the same at once;
 * - ignores SIGINT, SIGQUIT and SIGHUP, which a terminal sends to Charter's whole group: Charter decides what they
 *   mean and closes the server's stdin itself, or dies of them, which closes the pipe;
 * - exits as the server did (same code, or the same signal), so that Charter reports the server's own exit.
 * Plain JavaScript with no imports but Node's, so that it needs no file on disk.
 */
const watchdogSource = String.raw`"use strict";
const { spawn } = require("node:child_process");
const [grace, killAfter, command, ...args] = process.argv.slice(1);
for (const signal of ["SIGINT", "SIGQUIT", "SIGHUP"]) process.on(signal, () => {});
const child = spawn(command, args, { stdio: ["pipe", "inherit", "inherit"], detached: true });
let stopping = false;
function signalGroup(signal) {
  try { process.kill(-child.pid, signal); } catch {}
}
function stop(afterMs) {
  if (stopping) return;
  stopping = true;
  setTimeout(() => {
    signalGroup("SIGTERM");
    setTimeout(() => signalGroup("SIGKILL"), Number(killAfter));
  }, afterMs);
}
child.on("error", (error) => {
  process.stderr.write("cannot start " + command + ": " + error.message + "\n");
  process.exit(127);
});
child.stdin.on("error", () => {});
process.stdin.on("error", () => {});
process.stdin.pipe(child.stdin);
process.stdin.on("close", () => stop(Number(grace)));
process.stdin.on("end", () => stop(Number(grace)));
process.on("SIGTERM", () => stop(0));
child.on("exit", (code, signal) => {
  signalGroup("SIGTERM");
  if (signal === null) process.exit(code ?? 1);
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
  setTimeout(() => process.exit(1), 1000);
});
`;

/**
 * The command that starts an MCP stdio server under Charter's watchdog, so that the server never outlives Charter
 * by more than `watchdogGraceMs + watchdogKillAfterMs`, whatever happened to Charter. Node has no
 * PR_SET_PDEATHSIG; the watchdog stands in for it through the one thing that always happens when a process dies:
 * its pipes close. On Windows, which has no process groups to signal, the server is started directly.
 */
export function watchedServerCommand(
  command: string,
  args: readonly string[],
  options: { readonly graceMs?: number; readonly killAfterMs?: number } = {},
): { readonly command: string; readonly args: string[] } {
  if (process.platform === "win32") return { command, args: [...args] };
  return {
    command: process.execPath,
    args: [
      "-e",
      watchdogSource,
      String(options.graceMs ?? watchdogGraceMs),
      String(options.killAfterMs ?? watchdogKillAfterMs),
      command,
      ...args,
    ],
  };
}
