import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { CharterError } from "../foundation/charter-error.js";
import type { HeadState } from "./head-state.js";
import type { WorkRepository } from "./work-repository.js";

/**
 * The lock of a working tree and the record of the work item holding it, in one file in the working tree's git
 * folder (where no workspace tool reaches). Written before anything changes, completed once the before snapshot
 * exists; what `charter work recover` reads after a process died.
 */
export interface WorkLockRecord {
  readonly format: "charter-work-lock/1";
  readonly run_id: string;
  readonly pid: number;
  readonly host: string;
  readonly started_at: string;
  /** The work item (canonical, defaults applied) and its hash, for the failure receipt. */
  readonly work_item: unknown;
  readonly work_item_hash: string;
  readonly agent_id: string;
  /**
   * The run directory folder the item's run writes to (its `--runs-dir`, else `~/.charter/runs`): where recovery
   * reads the run's contract hash and transcript head when the run store does not have the run. Absent in records
   * written before it was kept.
   */
  readonly runs_directory?: string;
  /** Set once the before snapshot is taken: until then nothing has changed. */
  readonly before?: {
    readonly commit: string;
    readonly hash: string;
    readonly head: HeadState;
    /** A byte copy of the index, or null when the repository had none. */
    readonly index_copy: string | null;
  };
  /**
   * Set while the item waits for a person's decision on a call of its agent (a server's item): how many tool calls
   * the agent had made, which the continued item counts on from.
   */
  readonly paused?: { readonly executed_ops: number };
}

/**
 * The lock of a working tree held by a plan, and the record of where it stands: where the working tree goes back to
 * if the plan's process dies (HEAD's branch and the last commit applied; the working tree was clean there), the
 * folder of the running level's worktrees, and that level's items whose receipts are not written yet.
 */
export interface WorkPlanLockRecord {
  readonly format: "charter-work-plan-lock/1";
  /** The plan's id. */
  readonly run_id: string;
  readonly pid: number;
  readonly host: string;
  readonly started_at: string;
  readonly restore: HeadState & { readonly commit: string };
  readonly worktrees_folder: string;
  readonly pending: readonly PendingPlanItem[];
}

/** An item of the running level, from before its worktree exists until its receipt is written. */
export interface PendingPlanItem {
  readonly work_item_id: string;
  readonly run_id: string;
  readonly worktree: string;
  /** Set once its change is committed on the branch (the restore point then includes it). */
  readonly applied_commit: string | null;
}

/** Whatever holds a working tree's lock: one work item, or a plan. */
export type AnyWorkLockRecord = WorkLockRecord | WorkPlanLockRecord;

export function workLockPath(repository: WorkRepository): string {
  return join(repository.gitDirectory, "charter-work.lock");
}

/** The folder for one item's private files (the index copy), beside the lock. */
export async function workRecordFolder(repository: WorkRepository, runId: string): Promise<string> {
  const folder = join(repository.gitDirectory, "charter-work", runId);
  await mkdir(folder, { recursive: true });
  return folder;
}

/** Takes the working tree's lock (atomically: `wx`); WORK_LOCKED naming the holder when it is taken. */
export async function acquireWorkLock(repository: WorkRepository, record: AnyWorkLockRecord): Promise<void> {
  try {
    await writeFile(workLockPath(repository), `${JSON.stringify(record)}\n`, { flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const holder = await readWorkLock(repository);
    throw new CharterError(
      "WORK_LOCKED",
      `another ${holder?.format === "charter-work-plan-lock/1" ? "work plan" : "work item"} (run ${holder?.run_id ?? "unknown"}, process ${holder?.pid ?? "unknown"} on ${holder?.host ?? "unknown"}) is running in ${repository.root}: wait for it, or run 'charter work recover' if its process is gone`,
      { details: { repository: repository.root, runId: holder?.run_id ?? null, pid: holder?.pid ?? null } },
    );
  }
}

/** Replaces the record atomically (write, then rename over it). */
export async function updateWorkLock(repository: WorkRepository, record: AnyWorkLockRecord): Promise<void> {
  const temporary = `${workLockPath(repository)}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(record)}\n`);
  await rename(temporary, workLockPath(repository));
}

export async function readWorkLock(repository: WorkRepository): Promise<AnyWorkLockRecord | null> {
  try {
    return JSON.parse(await readFile(workLockPath(repository), "utf8")) as AnyWorkLockRecord;
  } catch {
    return null;
  }
}

export async function releaseWorkLock(repository: WorkRepository, runId: string): Promise<void> {
  await rm(join(repository.gitDirectory, "charter-work", runId), { recursive: true, force: true });
  await rm(workLockPath(repository), { force: true });
}

/** Whether the lock's holder still runs: a process on this host that exists (a lock from another host is held). */
export function lockHolderAlive(record: Pick<AnyWorkLockRecord, "pid" | "host">): boolean {
  if (record.host !== hostname()) return true;
  try {
    process.kill(record.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
