import { join } from "node:path";
import { mapWithConcurrency } from "../foundation/map-with-concurrency.js";
import { advanceBranch, mergeItemCommit } from "./apply-item-commit.js";
import {
  type ExecutedWorkItem,
  executeWorkItem,
  type WorkItemExecutionOptions,
} from "./execute-work-item.js";
import { addItemWorktree, removeItemWorktree } from "./item-worktree.js";
import type { LoadedWorkItem } from "./load-work-item.js";
import { savePendingPlanItem } from "./pending-plan-item.js";
import { recoverInterruptedPlan } from "./recover-interrupted-plan.js";
import { sealWorkItem } from "./seal-work-item.js";
import { updateWorkLock, type WorkPlanLockRecord } from "./work-lock.js";
import type { WorkPlanItemResult } from "./work-plan-result.js";
import type { WorkReceipt, WorkReceiptContent } from "./work-receipt.js";
import type { WorkRepository } from "./work-repository.js";

export interface PlanLevel {
  readonly repository: WorkRepository;
  /** The plan's record as the level starts: its restore point is the level's base commit. */
  readonly record: WorkPlanLockRecord;
  /** The level's items that run, in id order. */
  readonly items: readonly LoadedWorkItem[];
  readonly maxParallel: number;
  readonly keep: (receipt: WorkReceipt) => Promise<void>;
  readonly options: WorkItemExecutionOptions;
  /** Told each item's result, in id order, as its receipt takes its place in the chain. */
  readonly onResult: (result: WorkPlanItemResult) => void;
}

/**
 * One level of a plan: every item in its own worktree at the level's base (at most `maxParallel` at once), then,
 * in id order, each admitted change merged onto the branch (or `conflict`, nothing of it applied) and each item's
 * receipt written. The plan's record is updated before every step that changes the repository, so a process killed
 * anywhere is recovered to a state its receipts describe. Resolves with the record after the level (its restore
 * point the commit the next level starts from); when the level is interrupted, the plan's lock is released too.
 */
export async function runPlanLevel(level: PlanLevel): Promise<WorkPlanLockRecord> {
  const { repository, options } = level;
  const base = level.record.restore.commit;
  const planId = level.record.run_id;
  let record: WorkPlanLockRecord = {
    ...level.record,
    pending: level.items.map((loaded) => ({
      work_item_id: loaded.item.id,
      run_id: options.environment.newId("run"),
      worktree: join(level.record.worktrees_folder, loaded.item.id),
      applied_commit: null,
    })),
  };
  await updateWorkLock(repository, record);
  const settled = await mapWithConcurrency(level.items, level.maxParallel, async (loaded, index) => {
    // An interrupted plan starts nothing more.
    if (options.signal?.aborted === true) return null;
    const pending = record.pending[index] as WorkPlanLockRecord["pending"][number];
    const worktree = await addItemWorktree(repository, pending.worktree, base);
    return executeWorkItem(
      { loaded, repository: worktree, receipts: repository, runId: pending.run_id, options },
      async (executed) => {
        await savePendingPlanItem(repository, planId, executed);
        return executed;
      },
    );
  });
  const failed = settled.find((outcome) => outcome.status === "rejected");
  if (failed !== undefined || options.signal?.aborted === true) {
    const ended = await recoverInterruptedPlan(repository, record, {
      environment: options.environment,
      reason: "interrupted",
      keep: level.keep,
    });
    const sealed = new Map(ended.sealed.map((item) => [item.result.work_item_id, item.result]));
    for (const loaded of level.items) {
      level.onResult(
        sealed.get(loaded.item.id) ?? {
          status: "blocked",
          work_item_id: loaded.item.id,
          blocked_by: null,
          error: "Blocked: the plan was interrupted",
        },
      );
    }
    if (failed !== undefined) throw failed.reason;
    return { ...record, pending: [] };
  }
  const executed = settled.map((outcome) => (outcome as PromiseFulfilledResult<ExecutedWorkItem>).value);
  const current = { record };
  try {
    await applyInIdOrder(level, current, executed);
  } catch (error) {
    // Whatever failed (git, the file system), the repository goes back to the last item applied and recorded.
    await recoverInterruptedPlan(repository, current.record, {
      environment: options.environment,
      reason: `the plan stopped: ${error instanceof Error ? error.message : String(error)}`,
      keep: level.keep,
    });
    throw error;
  }
  record = current.record;
  for (const pending of record.pending) await removeItemWorktree(repository, pending.worktree);
  record = { ...record, pending: [] };
  await updateWorkLock(repository, record);
  return record;
}

/**
 * The level's admitted changes onto the branch in id order, each item's receipt written after it; `current.record`
 * is moved before every step that changes the repository (see `recoverInterruptedPlan`).
 */
async function applyInIdOrder(
  level: PlanLevel,
  current: { record: WorkPlanLockRecord },
  executed: readonly ExecutedWorkItem[],
): Promise<void> {
  const { repository } = level;
  let head = current.record.restore.commit;
  const changedBy = new Map<string, string>();
  for (const [index, item] of executed.entries()) {
    let content = item.content;
    if (content.status === "success" && content.commit !== null) {
      const merge = await mergeItemCommit(repository, head, content.commit);
      if (merge.kind === "conflict") {
        content = conflicted(content, merge.files, changedBy);
      } else {
        current.record = {
          ...current.record,
          restore: { ...current.record.restore, commit: merge.commit },
          pending: current.record.pending.map((pending, at) =>
            at === index ? { ...pending, applied_commit: merge.commit } : pending,
          ),
        };
        await updateWorkLock(repository, current.record);
        try {
          await advanceBranch(repository, head, merge.commit, content.work_item_id);
          head = merge.commit;
          for (const file of touched(content)) changedBy.set(file, content.work_item_id);
          content = { ...content, commit: merge.commit };
        } catch (error) {
          // The working tree refused the change (a file it touches was changed while the plan ran): nothing moved,
          // so the user's edit stays; the item is recorded as a conflict, as before this item.
          current.record = {
            ...current.record,
            restore: { ...current.record.restore, commit: head },
            pending: current.record.pending.map((pending, at) =>
              at === index ? { ...pending, applied_commit: null } : pending,
            ),
          };
          await updateWorkLock(repository, current.record);
          content = {
            ...content,
            status: "conflict",
            error: `Conflict: its change could not be applied to the working tree: ${error instanceof Error ? error.message : String(error)}`,
            output_hash: content.before_hash,
            commit: null,
          };
        }
      }
    }
    const sealed = await sealWorkItem(repository, { ...item, content }, level.keep);
    level.onResult(sealed.result);
  }
}

function touched(content: WorkReceiptContent): string[] {
  return [...content.created_files, ...content.modified_files, ...content.deleted_files];
}

/** An admitted change that conflicts with one applied before it in the level: recorded, nothing of it applied. */
function conflicted(
  content: WorkReceiptContent,
  files: readonly string[],
  changedBy: ReadonlyMap<string, string>,
): WorkReceiptContent {
  const earlier = [...new Set(files.flatMap((file) => changedBy.get(file) ?? []))].sort();
  const by = earlier.length === 0 ? "an earlier item of its level" : `work item ${earlier.join(", ")}`;
  return {
    ...content,
    status: "conflict",
    error: `Conflict: ${files.join(", ")} also changed by ${by}, applied before it; its change was not applied`,
    output_hash: content.before_hash,
    commit: null,
  };
}
