import { mkdtemp, rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { CharterError } from "../foundation/charter-error.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import type { WorkItemExecutionOptions } from "./execute-work-item.js";
import { readHeadState } from "./head-state.js";
import type { LoadedWorkItem } from "./load-work-item.js";
import { loadWorkPlan } from "./load-work-plan.js";
import { receiptKeeper } from "./receipt-keeper.js";
import { recoverInterruptedWork } from "./recover-interrupted-work.js";
import { requireCleanWorkingTree } from "./require-clean-working-tree.js";
import { runPlanLevel } from "./run-plan-level.js";
import { acquireWorkLock, releaseWorkLock, type WorkPlanLockRecord } from "./work-lock.js";
import { workPlanLevels } from "./work-plan-levels.js";
import type { BlockedWorkItemResult, WorkPlanItemResult, WorkPlanResult } from "./work-plan-result.js";
import type { WorkReceipt } from "./work-receipt.js";
import { openWorkRepository } from "./work-repository.js";

export interface RunWorkPlanOptions
  extends Omit<WorkItemExecutionOptions, "environment" | "commit" | "onFrozen"> {
  /** A folder of work item files, or a plan file with `items:`. */
  readonly planPath: string;
  /** A folder inside the git working tree the plan's changes are committed in. */
  readonly repository: string;
  /** Items of one level running at once (default 2). */
  readonly maxParallel?: number;
  readonly environment?: RuntimeEnvironment;
  readonly onWarning?: (text: string) => void;
  /** Told when a level starts, with its item ids (those that run) and its base commit. */
  readonly onLevelStarted?: (level: number, ids: readonly string[], base: string) => void;
  /** Told each item's result as it is recorded. */
  readonly onItemEnded?: (result: WorkPlanItemResult) => void;
}

export const defaultMaxParallel = 2;

/**
 * Runs a set of work items as a dependency DAG, level by level, on the current branch of a clean working tree.
 * A cycle is refused before anything runs. Within a level, items run in parallel (at most `maxParallel`), each in
 * its own git worktree at the level's base commit, as `work run --commit` runs one; then the admitted items'
 * commits are applied to the branch in id order (a conflicting one ends `conflict`, nothing of it applied), each
 * item's receipt taking its place in the repository's chain in that order. An item whose dependency is not in the
 * plan or did not succeed is `blocked` and never runs. The next level starts from the commit after applying.
 */
export async function runWorkPlan(options: RunWorkPlanOptions): Promise<WorkPlanResult> {
  const environment = options.environment ?? systemEnvironment;
  const maxParallel = options.maxParallel ?? defaultMaxParallel;
  if (!Number.isInteger(maxParallel) || maxParallel < 1) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `--max-parallel takes a whole number of at least 1, not ${maxParallel}`,
      {
        details: { argument: "max-parallel", value: maxParallel },
      },
    );
  }
  const items = await loadWorkPlan(options.planPath);
  const levels = workPlanLevels(items.map((loaded) => loaded.item));
  const repository = await openWorkRepository(options.repository);
  const byId = new Map(items.map((loaded) => [loaded.item.id, loaded]));
  const keepers = new Map(
    items.map((loaded) => [
      loaded.item.id,
      receiptKeeper(repository, loaded.directory, { ...options, environment }),
    ]),
  );
  // A receipt recovered from an earlier process may be of an item this plan does not have.
  const fallbackKeep = receiptKeeper(repository, items[0]?.directory ?? repository.root, {
    ...options,
    environment,
  });
  const keep = (receipt: WorkReceipt) => (keepers.get(receipt.work_item_id) ?? fallbackKeep)(receipt);
  await recoverInterruptedWork(repository, environment, keep);
  await requireCleanWorkingTree(repository);
  const head = await readHeadState(repository);
  if (head.commit === null) {
    throw new CharterError(
      "WORK_REPOSITORY_INVALID",
      `${repository.root} has no commit yet: a plan's items start from a commit, so make one first`,
      { details: { repository: repository.root, reason: "no_commit" } },
    );
  }
  const planId = environment.newId("plan");
  const worktreesFolder = await mkdtemp(join(tmpdir(), "charter-plan-"));
  let record: WorkPlanLockRecord = {
    format: "charter-work-plan-lock/1",
    run_id: planId,
    pid: process.pid,
    host: hostname(),
    started_at: new Date(environment.now()).toISOString(),
    restore: { branch: head.branch, commit: head.commit },
    worktrees_folder: worktreesFolder,
    pending: [],
  };
  try {
    await acquireWorkLock(repository, record);
  } catch (error) {
    await rm(worktreesFolder, { recursive: true, force: true });
    throw error;
  }
  const results = new Map<string, WorkPlanItemResult>();
  const recordResult = (result: WorkPlanItemResult) => {
    results.set(result.work_item_id, result);
    options.onItemEnded?.(result);
  };
  try {
    for (const [index, level] of levels.entries()) {
      const runnable: LoadedWorkItem[] = [];
      for (const id of level) {
        const loaded = byId.get(id) as LoadedWorkItem;
        const blocked = blockedResult(loaded, byId, results, options.signal?.aborted === true);
        if (blocked === null) runnable.push(loaded);
        else recordResult(blocked);
      }
      if (runnable.length === 0) continue;
      options.onLevelStarted?.(
        index,
        runnable.map((loaded) => loaded.item.id),
        record.restore.commit,
      );
      record = await runPlanLevel({
        repository,
        record,
        items: runnable,
        maxParallel,
        keep,
        options: { ...options, environment, commit: true },
        onResult: (result) => recordResult(result),
      });
    }
  } finally {
    await releaseWorkLock(repository, planId);
    await rm(worktreesFolder, { recursive: true, force: true });
  }
  const ordered = levels.flat().map((id) => results.get(id) as WorkPlanItemResult);
  return {
    status: ordered.every((result) => result.status === "success") ? "success" : "failure",
    plan_id: planId,
    repository: repository.root,
    levels,
    head_commit: record.restore.commit,
    results: ordered,
  };
}

/** Blocked, when the plan was interrupted or a dependency is not in the plan or did not succeed; else null. */
function blockedResult(
  loaded: LoadedWorkItem,
  byId: ReadonlyMap<string, LoadedWorkItem>,
  results: ReadonlyMap<string, WorkPlanItemResult>,
  interrupted: boolean,
): BlockedWorkItemResult | null {
  const id = loaded.item.id;
  if (interrupted) {
    return {
      status: "blocked",
      work_item_id: id,
      blocked_by: null,
      error: "Blocked: the plan was interrupted",
    };
  }
  for (const dependency of loaded.item.dependencies) {
    if (!byId.has(dependency)) {
      return {
        status: "blocked",
        work_item_id: id,
        blocked_by: dependency,
        error: `Blocked: dependency ${dependency} is not in the plan`,
      };
    }
    const status = results.get(dependency)?.status;
    if (status !== "success") {
      return {
        status: "blocked",
        work_item_id: id,
        blocked_by: dependency,
        error: `Blocked: dependency ${dependency} ended ${status ?? "without a result"}`,
      };
    }
  }
  return null;
}
