import type { RuntimeEnvironment } from "../foundation/environment.js";
import { selectRunStore } from "../runner/select-run-store.js";
import { openRunStore } from "../store/open-run-store.js";
import type { WorkReceipt } from "./work-receipt.js";
import type { WorkRepository } from "./work-repository.js";

/** Where a work item's receipts are stored besides RECEIPT.json: the run store its runs go to, for its tenant. */
export interface ReceiptStoreOptions {
  /** `--store`; else the configuration's store, `CHARTER_DATABASE_URL`, `~/.charter/charter.db` (as for runs). */
  readonly store?: string;
  readonly configPath?: string;
  /** Where configuration layers are looked for: the work item file's folder. */
  readonly promptDirectory?: string;
  readonly homeDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly tenantId?: string;
  readonly environment: RuntimeEnvironment;
}

/** Stores a receipt in the run store (the store is opened for this one write and closed). */
export async function storeWorkReceipt(
  repository: WorkRepository,
  receipt: WorkReceipt,
  options: ReceiptStoreOptions,
): Promise<void> {
  const location = await selectRunStore({
    store: options.store,
    cwd: repository.root,
    ...(options.configPath !== undefined ? { configPath: options.configPath } : {}),
    ...(options.promptDirectory !== undefined ? { promptDirectory: options.promptDirectory } : {}),
    ...(options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {}),
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
  });
  const store = await openRunStore({
    ...location,
    environment: options.environment,
    tenantId: options.tenantId ?? null,
  });
  try {
    await store.putWorkReceipt({
      receiptId: receipt.receipt_id,
      runId: receipt.run_id,
      workItemId: receipt.work_item_id,
      repository: repository.root,
      status: receipt.status,
      receiptHash: receipt.receipt_hash,
      receipt,
      createdAt: Date.parse(receipt.created_at),
    });
  } finally {
    await store.close();
  }
}
