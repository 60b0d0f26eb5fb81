import { resolve } from "node:path";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { executeWorkItem, type WorkItemExecutionOptions } from "./execute-work-item.js";
import { type LoadedWorkItem, loadWorkItem } from "./load-work-item.js";
import { receiptKeeper } from "./receipt-keeper.js";
import { recoverInterruptedWork } from "./recover-interrupted-work.js";
import { sealWorkItem } from "./seal-work-item.js";
import { openWorkRepository } from "./work-repository.js";
import type { WorkItemAwaitingApproval, WorkRunResult } from "./work-run-result.js";

export interface RunWorkItemOptions extends Omit<WorkItemExecutionOptions, "environment"> {
  /** The work item file (YAML or JSON). */
  readonly itemPath: string;
  /** A folder inside the git working tree the item runs in. */
  readonly repository: string;
  readonly environment?: RuntimeEnvironment;
  /** The item's run id (a server gives the id it answered the request with); default a new one. */
  readonly runId?: string;
  /** The item already read and checked (a server's, from a request body); `itemPath` is then not read. */
  readonly loaded?: LoadedWorkItem;
  /** Told what went wrong without changing the outcome (a receipt that could not be stored in the run store). */
  readonly onWarning?: (text: string) => void;
  /**
   * A server's item: a call of its agent that waits for a person stops the item (`awaiting_approval`, lock kept,
   * no receipt) for `continueWorkItem` to go on with the decision, instead of failing it.
   */
  readonly stopForApprovals?: boolean;
}

/**
 * Runs one work item atomically against a git working tree: freeze, the agent (under the item's limits), admission,
 * the test gate, then either the change stays (and, with `commit`, becomes one commit) or the working tree is
 * thawed back to the before snapshot. Every item, whatever its status, ends with a receipt.
 */
export async function runWorkItem(
  options: RunWorkItemOptions & { readonly stopForApprovals: true },
): Promise<WorkRunResult | WorkItemAwaitingApproval>;
export async function runWorkItem(options: RunWorkItemOptions): Promise<WorkRunResult>;
export async function runWorkItem(
  options: RunWorkItemOptions,
): Promise<WorkRunResult | WorkItemAwaitingApproval> {
  const environment = options.environment ?? systemEnvironment;
  const loaded = options.loaded ?? (await loadWorkItem(options.itemPath));
  const repository = await openWorkRepository(options.repository);
  const keep = receiptKeeper(repository, loaded.directory, { ...options, environment });
  await recoverInterruptedWork(repository, environment, keep, {
    ...(options.store !== undefined ? { store: options.store } : {}),
    ...(options.configPath !== undefined ? { configPath: resolve(options.configPath) } : {}),
    promptDirectory: loaded.directory,
    ...(options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {}),
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
    ...(options.tenantId !== undefined ? { tenantId: options.tenantId } : {}),
    ...(options.runsDirectory !== undefined ? { runsDirectory: resolve(options.runsDirectory) } : {}),
    environment,
  });
  const runId = options.runId ?? environment.newId("run");
  return executeWorkItem<WorkRunResult | WorkItemAwaitingApproval>(
    { loaded, repository, receipts: repository, runId, options: { ...options, environment } },
    async (executed) => (await sealWorkItem(repository, executed, keep)).result,
    options.stopForApprovals === true
      ? async () => ({ status: "awaiting_approval", work_item_id: loaded.item.id, run_id: runId })
      : undefined,
  );
}
