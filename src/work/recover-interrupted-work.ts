import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import type { InterruptedRunSources } from "./interrupted-run-record.js";
import { recoverInterruptedPlan } from "./recover-interrupted-plan.js";
import { rollBackWorkItem } from "./roll-back-work-item.js";
import { lockHolderAlive, readWorkLock, releaseWorkLock } from "./work-lock.js";
import type { WorkReceipt } from "./work-receipt.js";
import type { WorkRepository } from "./work-repository.js";

/**
 * What recovery found: nothing, a work item or plan still running, one item whose process died (now rolled back),
 * or a plan whose process died (the working tree back at its last applied item, its worktrees removed).
 */
export type WorkRecovery =
  | { readonly kind: "none" }
  | { readonly kind: "running"; readonly runId: string; readonly pid: number; readonly host: string }
  | { readonly kind: "recovered"; readonly receipt: WorkReceipt; readonly path: string }
  | {
      readonly kind: "recovered_plan";
      readonly planId: string;
      /** HEAD's commit now: the last item of the plan whose change was applied (or where the plan started). */
      readonly commit: string;
      readonly receipts: readonly { readonly receipt: WorkReceipt; readonly path: string }[];
      readonly worktreesRemoved: readonly string[];
    };

/**
 * Restores the working tree of a work item whose process died (killed, crashed, the machine restarted): the lock's
 * record names its before snapshot, which is thawed back together with HEAD, its branch and the index, and a
 * failure receipt (`error: interrupted`) is written, with the contract hash and transcript head its run had
 * recorded (looked for in `runSources`: the run store, then the run directory). A plan's record is recovered by
 * `recoverInterruptedPlan`. Every `charter work` command calls this first.
 */
export async function recoverInterruptedWork(
  repository: WorkRepository,
  environment: RuntimeEnvironment = systemEnvironment,
  /** Also keeps the failure receipt elsewhere (the run store). */
  keepReceipt?: (receipt: WorkReceipt) => Promise<void>,
  /** Where the item's run is looked for: by default the run store found from the repository, and the run directory the lock names. */
  runSources: InterruptedRunSources = { environment },
  /**
   * The run whose process is known to be gone whatever the lock's pid and host say: a server's work item whose
   * worker's lease expired (that worker may have run on another machine, whose processes this one cannot see).
   */
  abandonedRunId?: string,
): Promise<WorkRecovery> {
  const record = await readWorkLock(repository);
  if (record === null) return { kind: "none" };
  if (record.run_id !== abandonedRunId && lockHolderAlive(record))
    return { kind: "running", runId: record.run_id, pid: record.pid, host: record.host };
  if (record.format === "charter-work-plan-lock/1") {
    const recovered = await recoverInterruptedPlan(repository, record, {
      environment,
      reason: "interrupted",
      keep: keepReceipt ?? (async () => undefined),
    });
    return {
      kind: "recovered_plan",
      planId: record.run_id,
      commit: recovered.commit,
      receipts: recovered.receipts,
      worktreesRemoved: recovered.worktreesRemoved,
    };
  }
  if (record.before === undefined) {
    // The process died before its snapshot existed: nothing had changed, there is nothing to record.
    await releaseWorkLock(repository, record.run_id);
    return { kind: "none" };
  }
  const { receipt, path } = await rollBackWorkItem(
    repository,
    { ...record, before: record.before },
    environment,
    keepReceipt,
    runSources,
  );
  return { kind: "recovered", receipt, path };
}
