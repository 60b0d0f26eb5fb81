import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { RunOwner, RunSummary } from "../store/run-record.js";

/** How often a running run's process says it is alive, unless the environment says otherwise. */
export const defaultHeartbeatIntervalMilliseconds = 30_000;
/** A run on another host whose heartbeat is this many intervals old is taken as abandoned. */
const missedHeartbeats = 3;
/** Start times of one process read twice may differ by rounding (clock ticks); more means another process. */
const startTimeTolerance = 2_000;

/**
 * When a process started, in milliseconds since the epoch, from `/proc` (Linux): its start in clock ticks after
 * boot plus the boot time. Null where `/proc` cannot tell (another system, or no such process).
 */
export function processStartTime(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces: fields are counted after its end.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const startTicks = Number(fields[19]);
    const bootLine = readFileSync("/proc/stat", "utf8")
      .split("\n")
      .find((line) => line.startsWith("btime "));
    const bootSeconds = Number(bootLine?.slice("btime ".length));
    if (!Number.isFinite(startTicks) || !Number.isFinite(bootSeconds)) return null;
    // Clock ticks are 100 a second on Linux (USER_HZ), whatever the kernel's own tick rate.
    return bootSeconds * 1000 + startTicks * 10;
  } catch {
    return null;
  }
}

let current: RunOwner | null = null;

/** This process as a run's owner: its id, host and start time (read as `processStartTime` reads others'). */
export function currentRunOwner(): RunOwner {
  current ??= {
    pid: process.pid,
    host: hostname(),
    startedAt: processStartTime(process.pid) ?? Math.round(Date.now() - process.uptime() * 1000),
  };
  return current;
}

/** Whether the process is gone: no process with its id, or one started at another time (its id reused). */
function processGone(owner: RunOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: a process of another user holds the id, which is alive.
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  const startedAt = processStartTime(owner.pid);
  return startedAt !== null && Math.abs(startedAt - owner.startedAt) > startTimeTolerance;
}

/**
 * Whether a `running` run was abandoned: the process that runs it is gone (on this host, known at once), or, on
 * another host, has not said it is alive for `missedHeartbeats` heartbeat intervals. A run with no owner recorded
 * (stored before owners were) is never taken as abandoned.
 */
export function isRunAbandoned(
  run: Pick<RunSummary, "status" | "owner" | "heartbeatAt">,
  now: number,
  heartbeatIntervalMilliseconds = defaultHeartbeatIntervalMilliseconds,
): boolean {
  if (run.status !== "running" || run.owner === null) return false;
  if (run.owner.host === hostname()) return processGone(run.owner);
  const lastSeen = run.heartbeatAt ?? 0;
  return now - lastSeen > missedHeartbeats * heartbeatIntervalMilliseconds;
}
