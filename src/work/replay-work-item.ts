import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { executionContractSchema } from "../contract/execution-contract.js";
import { CharterError } from "../foundation/charter-error.js";
import { systemEnvironment } from "../foundation/environment.js";
import type { ReplayReport } from "../runner/replay-report.js";
import { replayStoredRun } from "../runner/replay-stored-run.js";
import { selectRunStore } from "../runner/select-run-store.js";
import { openRunStore } from "../store/open-run-store.js";
import { createToolCallExecutor } from "../tools/create-tool-call-executor.js";
import { ToolRegistry } from "../tools/tool-registry.js";
import { gitText } from "./git-command.js";
import { stateHash, workingTreeListing } from "./state-listing.js";
import { findWorkReceipt } from "./verify-work-receipt.js";
import type { WorkItem } from "./work-item-schema.js";
import { openWorkRepository } from "./work-repository.js";
import { createWorkspaceTools } from "./workspace-tools.js";

export interface WorkReplay {
  readonly ok: boolean;
  readonly receiptId: string;
  readonly expectedHash: string;
  /** The state hash of the replayed worktree. */
  readonly actualHash: string;
  readonly report: ReplayReport;
}

/**
 * `charter work replay`: the item's run again from its before snapshot, in a separate worktree (given, already at
 * the before snapshot, or a temporary one made and removed here), with the recorded model answers (offline) and
 * the workspace tools live, every recorded call executed again; then the worktree's state hash against the
 * receipt's after hash.
 */
export async function replayWorkItem(options: {
  readonly reference: string;
  readonly repository: string;
  readonly worktree?: string;
  readonly store?: string;
  readonly configPath?: string;
  readonly tenantId?: string;
}): Promise<WorkReplay> {
  const repository = await openWorkRepository(options.repository);
  const { receipt } = await findWorkReceipt(repository, options.reference);
  if (receipt.status !== "success" || receipt.after_hash === null) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `receipt ${receipt.receipt_id} is ${receipt.status}: only an admitted change has a state to replay to`,
      { details: { receiptId: receipt.receipt_id, status: receipt.status } },
    );
  }
  let temporary: string | null = null;
  let worktree = options.worktree;
  if (worktree === undefined) {
    temporary = join(await mkdtemp(join(tmpdir(), "charter-work-replay-")), "tree");
    await gitText(["worktree", "add", "--quiet", "--detach", temporary, receipt.before_commit], {
      cwd: repository.root,
    });
    worktree = temporary;
  }
  const location = await selectRunStore({
    store: options.store,
    cwd: repository.root,
    ...(options.configPath !== undefined ? { configPath: options.configPath } : {}),
  });
  const store = await openRunStore({
    ...location,
    environment: systemEnvironment,
    tenantId: options.tenantId ?? null,
  });
  try {
    const replayRepository = await openWorkRepository(worktree);
    const before = stateHash(await workingTreeListing(replayRepository));
    if (before !== receipt.before_hash) {
      throw new CharterError(
        "ARGUMENT_INVALID",
        `the worktree ${worktree} is not at the item's before state (${before}, the receipt has ${receipt.before_hash})`,
        { details: { worktree, argument: "worktree" } },
      );
    }
    const run = await store.getRun(receipt.run_id);
    if (run === null) {
      throw new CharterError(
        "RUN_NOT_FOUND",
        `the item's run ${receipt.run_id} is not in ${store.location}: pass --store`,
        {
          details: { runId: receipt.run_id },
        },
      );
    }
    const contract = executionContractSchema.parse(run.contract);
    const item = receipt.work_item as WorkItem;
    const registry = new ToolRegistry(
      createWorkspaceTools({ repository: replayRepository, allowCommands: item.allow_commands === true }),
    );
    const report = await replayStoredRun(store, receipt.run_id, {
      live: {
        executor: createToolCallExecutor({
          registry,
          policy: contract,
          environment: systemEnvironment,
          runId: receipt.run_id,
          outputStore: null,
        }),
        destructiveTools: [],
        sourceOf: (name) => registry.get(name)?.manifest.source ?? null,
        reExecuteEverything: true,
      },
    });
    const actualHash = stateHash(await workingTreeListing(replayRepository));
    return {
      ok: report.ok && actualHash === receipt.after_hash,
      receiptId: receipt.receipt_id,
      expectedHash: receipt.after_hash,
      actualHash,
      report,
    };
  } finally {
    await store.close();
    if (temporary !== null) {
      await gitText(["worktree", "remove", "--force", temporary], { cwd: repository.root }).catch(
        () => undefined,
      );
      await rm(temporary, { recursive: true, force: true });
    }
  }
}
