import type { RuntimeEnvironment } from "../foundation/environment.js";
import { restoreHeadState } from "./head-state.js";
import { interruptedReceiptContent } from "./interrupted-receipt.js";
import { type InterruptedRunSources, interruptedRunRecord } from "./interrupted-run-record.js";
import { stateHash, workingTreeListing } from "./state-listing.js";
import { thawWorkingTree } from "./thaw-working-tree.js";
import { releaseWorkLock, type WorkLockRecord } from "./work-lock.js";
import { createRunFolder, type WorkReceipt, writeReceipt } from "./work-receipt.js";
import type { WorkRepository } from "./work-repository.js";

/**
 * Ends a work item that will not go on (its process died, or it waited for a person and was cancelled): the working
 * tree goes back to the before snapshot its lock record names, together with HEAD, its branch and the index; a
 * failure receipt (`error: interrupted`) is written with what its run had recorded, and the lock is released.
 */
export async function rollBackWorkItem(
  repository: WorkRepository,
  record: WorkLockRecord & { readonly before: NonNullable<WorkLockRecord["before"]> },
  environment: RuntimeEnvironment,
  /** Also keeps the failure receipt elsewhere (the run store). */
  keepReceipt: ((receipt: WorkReceipt) => Promise<void>) | undefined,
  runSources: InterruptedRunSources,
): Promise<{ readonly receipt: WorkReceipt; readonly path: string }> {
  const { before } = record;
  await thawWorkingTree(repository, before.commit);
  await restoreHeadState(repository, before.head, before.index_copy);
  const outputHash = stateHash(await workingTreeListing(repository));
  const run = await interruptedRunRecord(repository, record, runSources);
  const folder = await createRunFolder(repository, record.run_id);
  const written = await writeReceipt(
    repository,
    folder,
    interruptedReceiptContent(record, before, outputHash, environment, run),
  );
  await keepReceipt?.(written.receipt);
  await releaseWorkLock(repository, record.run_id);
  return written;
}
