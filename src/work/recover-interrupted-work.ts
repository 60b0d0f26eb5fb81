import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { restoreHeadState } from "./head-state.js";
import { stateHash, workingTreeListing } from "./state-listing.js";
import { thawWorkingTree } from "./thaw-working-tree.js";
import { lockHolderAlive, readWorkLock, releaseWorkLock } from "./work-lock.js";
import { createRunFolder, type WorkReceipt, writeReceipt } from "./work-receipt.js";
import type { WorkRepository } from "./work-repository.js";

/** What recovery found: nothing, a work item still running, or one whose process died (now rolled back). */
export type WorkRecovery =
  | { readonly kind: "none" }
  | { readonly kind: "running"; readonly runId: string; readonly pid: number; readonly host: string }
  | { readonly kind: "recovered"; readonly receipt: WorkReceipt; readonly path: string };

/**
 * Restores the working tree of a work item whose process died (killed, crashed, the machine restarted): the lock's
 * record names its before snapshot, which is thawed back together with HEAD, its branch and the index, and a
 * failure receipt (`error: interrupted`) is written. Every `charter work` command calls this first.
 */
export async function recoverInterruptedWork(
  repository: WorkRepository,
  environment: RuntimeEnvironment = systemEnvironment,
  /** Also keeps the failure receipt elsewhere (the run store). */
  keepReceipt?: (receipt: WorkReceipt) => Promise<void>,
): Promise<WorkRecovery> {
  const record = await readWorkLock(repository);
  if (record === null) return { kind: "none" };
  if (lockHolderAlive(record))
    return { kind: "running", runId: record.run_id, pid: record.pid, host: record.host };
  const before = record.before;
  if (before === undefined) {
    // The process died before its snapshot existed: nothing had changed, there is nothing to record.
    await releaseWorkLock(repository, record.run_id);
    return { kind: "none" };
  }
  await thawWorkingTree(repository, before.commit);
  await restoreHeadState(repository, before.head, before.index_copy);
  const outputHash = stateHash(await workingTreeListing(repository));
  const folder = await createRunFolder(repository, record.run_id);
  const { receipt, path } = await writeReceipt(repository, folder, {
    format: "charter-work-receipt/1",
    receipt_id: environment.newId("receipt"),
    work_item_id: String((record.work_item as { id?: unknown }).id ?? ""),
    work_item: record.work_item,
    work_item_hash: record.work_item_hash,
    agent_id: record.agent_id,
    contract_hash: null,
    run_id: record.run_id,
    transcript_head: null,
    status: "failure",
    error: "interrupted",
    denial_reason: null,
    before_hash: before.hash,
    before_commit: before.commit,
    after_hash: null,
    after_commit: null,
    output_hash: outputHash,
    modified_files: [],
    created_files: [],
    deleted_files: [],
    artifact_hashes: {},
    metrics: { execution_time_ms: 0, tool_ops_count: 0, delta_size: 0, files_touched: 0 },
    test_output_hash: null,
    commit: null,
    created_at: new Date(environment.now()).toISOString(),
  });
  await keepReceipt?.(receipt);
  await releaseWorkLock(repository, record.run_id);
  return { kind: "recovered", receipt, path };
}
