import { join } from "node:path";
import type { ExecutedWorkItem } from "./execute-work-item.js";
import { writeReplayScript } from "./replay-script.js";
import type { WorkReceipt } from "./work-receipt.js";
import { writeReceipt } from "./work-receipt.js";
import type { WorkRepository } from "./work-repository.js";
import type { WorkRunResult } from "./work-run-result.js";

export interface SealedWorkItem {
  readonly receipt: WorkReceipt;
  /** RECEIPT.json. */
  readonly path: string;
  readonly result: WorkRunResult;
}

/**
 * Gives an executed item its place in the repository's receipt chain: RECEIPT.json in its run folder (the chain
 * head moves to it), the receipt kept elsewhere too (`keep`: the run store), the replay script when it succeeded,
 * and the seed's RunResult with absolute paths in `repository`'s working tree.
 */
export async function sealWorkItem(
  repository: WorkRepository,
  executed: ExecutedWorkItem,
  keep: (receipt: WorkReceipt) => Promise<void>,
): Promise<SealedWorkItem> {
  const { receipt, path } = await writeReceipt(repository, executed.folder, executed.content);
  await keep(receipt);
  const proofScript =
    receipt.status === "success"
      ? await writeReplayScript(executed.folder, repository.root, path, receipt)
      : null;
  const absolute = (paths: readonly string[]) => paths.map((file) => join(repository.root, file));
  const result: WorkRunResult = {
    status: receipt.status,
    work_item_id: receipt.work_item_id,
    run_id: receipt.run_id,
    receipt_id: receipt.receipt_id,
    receipt_path: path,
    modified_files: absolute(receipt.modified_files),
    created_files: absolute(receipt.created_files),
    deleted_files: absolute(receipt.deleted_files),
    output_hash: receipt.output_hash,
    artifact_hashes: Object.fromEntries(
      Object.entries(receipt.artifact_hashes).map(([file, hash]) => [join(repository.root, file), hash]),
    ),
    metrics: receipt.metrics,
    ...(executed.testOutput !== null ? { test_output: executed.testOutput } : {}),
    ...(proofScript !== null ? { proof_script: proofScript } : {}),
    ...(receipt.error !== null ? { error: receipt.error } : {}),
    ...(receipt.denial_reason !== null ? { denial_reason: receipt.denial_reason } : {}),
  };
  return { receipt, path, result };
}
