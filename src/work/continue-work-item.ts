import { hostname } from "node:os";
import { CharterError } from "../foundation/charter-error.js";
import { systemEnvironment } from "../foundation/environment.js";
import { finishFrozen } from "./execute-work-item.js";
import { loadWorkItem } from "./load-work-item.js";
import { receiptKeeper } from "./receipt-keeper.js";
import type { RunWorkItemOptions } from "./run-work-item.js";
import { sealWorkItem } from "./seal-work-item.js";
import { readWorkLock, updateWorkLock } from "./work-lock.js";
import { createRunFolder } from "./work-receipt.js";
import { openWorkRepository } from "./work-repository.js";
import type { WorkItemAwaitingApproval, WorkRunResult } from "./work-run-result.js";

/**
 * Goes on with a server's work item that stopped for a person's decision (`runWorkItem` with `stopForApprovals`):
 * its lock is still held and its working tree is as the agent left it. The item's agent run continues through the
 * durable resume with the decisions (an approved call runs once, a denied one is a tool failure the agent sees; no
 * earlier call runs again), then admission, the test gate and the commit or the rollback follow as for any item,
 * and the receipt is written. It stops again when the agent waits on another call. RUN_NOT_RESUMABLE when the
 * repository's lock is not this item's any more (recovered meanwhile, say): nothing is changed then.
 */
export async function continueWorkItem(
  options: RunWorkItemOptions & {
    readonly runId: string;
    readonly approve: readonly string[];
    readonly deny: readonly string[];
  },
): Promise<WorkRunResult | WorkItemAwaitingApproval> {
  const environment = options.environment ?? systemEnvironment;
  const loaded = options.loaded ?? (await loadWorkItem(options.itemPath));
  const repository = await openWorkRepository(options.repository);
  const { runId } = options;
  const record = await readWorkLock(repository);
  if (record?.format !== "charter-work-lock/1" || record.run_id !== runId || record.before === undefined) {
    throw new CharterError(
      "RUN_NOT_RESUMABLE",
      `work item run ${runId} is not waiting in ${repository.root}: the repository's lock is ${record === null ? "free" : `held by run ${record.run_id}`}`,
      { details: { runId, reason: "work_item_not_waiting", lockedBy: record?.run_id ?? null } },
    );
  }
  // This process holds the lock from now on: a recovery finds it alive while it works, and dead if it dies.
  const held = { ...record, pid: process.pid, host: hostname() };
  await updateWorkLock(repository, held);
  const keep = receiptKeeper(repository, loaded.directory, { ...options, environment });
  const folder = await createRunFolder(repository, runId);
  const { before } = record;
  return finishFrozen<WorkRunResult | WorkItemAwaitingApproval>(
    { loaded, repository, receipts: repository, runId, options: { ...options, environment } },
    folder,
    { commit: before.commit, hash: before.hash, head: before.head, index: before.index_copy },
    {
      record: held,
      finish: async (executed) => (await sealWorkItem(repository, executed, keep)).result,
      awaitingApproval: async () => ({
        status: "awaiting_approval",
        work_item_id: loaded.item.id,
        run_id: runId,
      }),
      continued: { approve: options.approve, deny: options.deny },
    },
  );
}
