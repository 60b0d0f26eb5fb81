import { join, resolve } from "node:path";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import { storeWorkReceipt } from "./store-work-receipt.js";
import type { WorkReceipt } from "./work-receipt.js";
import type { WorkRepository } from "./work-repository.js";

/** Where receipts are stored besides RECEIPT.json, and who is told when that fails. */
export interface ReceiptKeeperOptions {
  readonly store?: string;
  readonly configPath?: string;
  readonly homeDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly tenantId?: string;
  readonly environment: RuntimeEnvironment;
  readonly onWarning?: (text: string) => void;
}

/**
 * Stores each receipt in the run store too (configuration looked for from `promptDirectory`, the work item file's
 * folder); a store that cannot be written is a warning, never the outcome: RECEIPT.json is the record.
 */
export function receiptKeeper(
  repository: WorkRepository,
  promptDirectory: string,
  options: ReceiptKeeperOptions,
): (receipt: WorkReceipt) => Promise<void> {
  return async (receipt) => {
    try {
      await storeWorkReceipt(repository, receipt, {
        ...(options.store !== undefined ? { store: options.store } : {}),
        ...(options.configPath !== undefined ? { configPath: resolve(options.configPath) } : {}),
        promptDirectory,
        ...(options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {}),
        ...(options.processEnvironment !== undefined
          ? { processEnvironment: options.processEnvironment }
          : {}),
        ...(options.tenantId !== undefined ? { tenantId: options.tenantId } : {}),
        environment: options.environment,
      });
    } catch (error) {
      options.onWarning?.(
        `receipt ${receipt.receipt_id} is in ${join(repository.root, ".charter", "work", receipt.run_id)} but could not be stored in the run store: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };
}
