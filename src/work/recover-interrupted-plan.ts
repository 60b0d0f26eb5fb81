import { access, rm } from "node:fs/promises";
import { join } from "node:path";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { ExecutedWorkItem } from "./execute-work-item.js";
import { gitText } from "./git-command.js";
import { interruptedReceiptContent } from "./interrupted-receipt.js";
import { removeItemWorktree } from "./item-worktree.js";
import { readPendingPlanItem } from "./pending-plan-item.js";
import { type SealedWorkItem, sealWorkItem } from "./seal-work-item.js";
import { thawWorkingTree } from "./thaw-working-tree.js";
import { type PendingPlanItem, readWorkLock, releaseWorkLock, type WorkPlanLockRecord } from "./work-lock.js";
import { createRunFolder, receiptsFolder, type WorkReceipt, writeReceipt } from "./work-receipt.js";
import { openWorkRepository, type WorkRepository } from "./work-repository.js";

export interface PlanSettlement {
  readonly environment: RuntimeEnvironment;
  /** Why the level ended early (`interrupted`): the error of an admitted change that was never applied. */
  readonly reason: string;
  readonly keep: (receipt: WorkReceipt) => Promise<void>;
}

export interface SettledPlan {
  /** HEAD's commit now: the last item whose change was applied, or where the plan started. */
  readonly commit: string;
  /** The receipts written for the level's items, in id order. */
  readonly receipts: readonly { readonly receipt: WorkReceipt; readonly path: string }[];
  /** Results of the items that had finished (those with a receipt from their own execution). */
  readonly sealed: readonly SealedWorkItem[];
  readonly worktreesRemoved: readonly string[];
}

/**
 * Ends a plan whose level cannot go on: its process died (`work recover`, or any `work` command, found its record),
 * or the plan itself stops (interrupted, an error). The working tree, HEAD and index go back to the record's restore
 * point (the last applied item: every receipt in the chain stays true); each item of the level without a receipt
 * gets one in id order (an item that finished keeps its status, except that an admitted change never applied is a
 * failure with `reason`; one still running when the process died is `interrupted`, as `work run` records it); the
 * level's worktrees are removed and the lock released.
 */
export async function recoverInterruptedPlan(
  repository: WorkRepository,
  record: WorkPlanLockRecord,
  settlement: PlanSettlement,
): Promise<SettledPlan> {
  await restoreWorkingTree(repository, record.restore);
  const receipts: { receipt: WorkReceipt; path: string }[] = [];
  const sealed: SealedWorkItem[] = [];
  for (const pending of record.pending) {
    const alreadyWritten = join(receiptsFolder(repository), pending.run_id, "RECEIPT.json");
    if (
      await access(alreadyWritten).then(
        () => true,
        () => false,
      )
    )
      continue;
    const executed = await readPendingPlanItem(repository, record.run_id, pending.run_id);
    if (executed !== null) {
      const item = await sealWorkItem(
        repository,
        settledContent(executed, pending, settlement.reason),
        settlement.keep,
      );
      sealed.push(item);
      receipts.push({ receipt: item.receipt, path: item.path });
      continue;
    }
    const written = await interruptedItemReceipt(repository, pending, settlement);
    if (written !== null) receipts.push(written);
  }
  const worktreesRemoved: string[] = [];
  for (const pending of record.pending) {
    await removeItemWorktree(repository, pending.worktree);
    worktreesRemoved.push(pending.worktree);
  }
  await rm(record.worktrees_folder, { recursive: true, force: true });
  await gitText(["worktree", "prune"], { cwd: repository.root });
  await releaseWorkLock(repository, record.run_id);
  return { commit: record.restore.commit, receipts, sealed, worktreesRemoved };
}

/** What an item that finished its execution is recorded as, when its level ends before its turn to be applied. */
function settledContent(
  executed: ExecutedWorkItem,
  pending: PendingPlanItem,
  reason: string,
): ExecutedWorkItem {
  const { content } = executed;
  if (pending.applied_commit !== null) {
    return { ...executed, content: { ...content, commit: pending.applied_commit } };
  }
  if (content.status !== "success") return executed;
  return {
    ...executed,
    content: { ...content, status: "failure", error: reason, output_hash: content.before_hash, commit: null },
  };
}

/** An item still running when its plan's process died: its worktree's lock names its before snapshot. */
async function interruptedItemReceipt(
  repository: WorkRepository,
  pending: PendingPlanItem,
  settlement: PlanSettlement,
): Promise<{ receipt: WorkReceipt; path: string } | null> {
  const worktree = await openWorkRepository(pending.worktree).catch(() => null);
  const record = worktree === null ? null : await readWorkLock(worktree);
  if (record === null || record.format !== "charter-work-lock/1" || record.before === undefined) return null;
  // The worktree is thrown away: the item's change did not stay, its output is its before state.
  const folder = await createRunFolder(repository, record.run_id);
  const written = await writeReceipt(
    repository,
    folder,
    interruptedReceiptContent(record, record.before, record.before.hash, settlement.environment),
  );
  await settlement.keep(written.receipt);
  return written;
}

/** The working tree, HEAD and index exactly at the restore point (a clean state: the tree of its commit). */
async function restoreWorkingTree(
  repository: WorkRepository,
  restore: WorkPlanLockRecord["restore"],
): Promise<void> {
  const cwd = repository.root;
  await thawWorkingTree(repository, restore.commit);
  if (restore.branch !== null) {
    await gitText(["symbolic-ref", "HEAD", restore.branch], { cwd });
    await gitText(["update-ref", restore.branch, restore.commit], { cwd });
  } else {
    await gitText(["update-ref", "--no-deref", "HEAD", restore.commit], { cwd });
  }
  // The index as HEAD's tree, stat data refreshed from the (now matching) files.
  await gitText(["reset", "-q"], { cwd });
}
