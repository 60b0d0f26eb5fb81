import { join, resolve } from "node:path";
import { CharterError } from "../../foundation/charter-error.js";
import type { ErrorCode } from "../../foundation/error-codes.js";
import type { RunStore } from "../../store/run-store.js";
import { gitText } from "../../work/git-command.js";
import { validateWorkItem } from "../../work/load-work-item.js";
import { runWorkItem } from "../../work/run-work-item.js";
import type { WorkReceipt } from "../../work/work-receipt.js";
import type { WorkItemAwaitingApproval, WorkRunResult } from "../../work/work-run-result.js";
import { failureClassOf } from "../failure-class.js";
import type { RunExecutionOptions, RunExecutionOutcome } from "./execute-run-request.js";
import { stoppedBeforeStart } from "./execute-workflow-request.js";
import { findServerRepository } from "./find-server-workflow.js";
import { pendingApprovalsOf } from "./pending-approvals-of.js";
import { failedRunData, recordRunEvent } from "./record-run-event.js";
import { serverToolPermissions } from "./role-tool-classes.js";
import type { RunExecutionContext } from "./run-execution-context.js";
import type { RunDecisionRequest, RunRequest } from "./run-request.js";
import { tenantModelCallBudget } from "./tenant-model-call-budget.js";

const classOf = (code: string) => failureClassOf(code as ErrorCode);

/** The largest diff kept per file in the run's last event: a diff is for reading, the receipt is the record. */
const maxDiffCharacters = 64 * 1024;

/**
 * Executes a work item run the server accepted, as `charter work run --commit` runs one, in the repository the
 * request names from `server.repositories`: freeze, the agent (under the request's run id and tenant), admission,
 * the test gate, then one commit or the working tree restored; the receipt is stored for the tenant. Lifecycle:
 * ROUTED (the item's agent), EXECUTING once the before snapshot is taken, then COMPLETED for `success`, else FAILED;
 * the last event records each touched file's diff and the test output (`work_item`), which the receipt names
 * only by hash.
 */
export async function executeWorkItemRequest(
  request: RunRequest,
  context: RunExecutionContext,
  options: RunExecutionOptions = {},
): Promise<RunExecutionOutcome> {
  const store = context.store.forTenant(request.tenantId);
  const stopped = await stoppedBeforeStart(store, request, context);
  if (stopped !== null) return stopped;
  if ((await store.getRun(request.runId)) !== null) return { status: "suspended", result: null };
  let result: WorkRunResult | WorkItemAwaitingApproval;
  let repository: string;
  try {
    const { storeUrl, loaded, repository: itemRepository } = workItemOfRequest(request, context);
    repository = itemRepository;
    await recordRunEvent(store, request, context, "ROUTED", {
      agent: loaded.item.agent_id,
      kind: "work-item",
      repository: request.repository,
      work_item: loaded.item.id,
    });
    const overlay = await context.tenantConfiguration?.(request.tenantId);
    result = await runWorkItem({
      ...(overlay != null ? { configurationOverlay: overlay } : {}),
      itemPath: loaded.path,
      loaded,
      runId: request.runId,
      repository,
      commit: true,
      // A delete-class call of the agent waits for a person (POST /v1/work-items/runs/:id/approvals).
      stopForApprovals: true,
      store: storeUrl,
      tenantId: request.tenantId,
      environment: context.environment,
      agentCatalog: context.agentCatalog,
      toolPermissions: serverToolPermissions(request.role, context.roleToolClasses),
      modelCallBudget: tenantModelCallBudget(context, request.tenantId),
      // The server's configuration and agents apply, never what the repository brings.
      agentDirectory: context.cwd,
      ...(context.configPath !== undefined ? { configPath: context.configPath } : {}),
      ...workItemProcessOptions(context, options),
      onFrozen: (_runId, beforeHash) => {
        void recordRunEvent(store, request, context, "EXECUTING", { before_hash: beforeHash }).catch(
          () => undefined,
        );
        options.onExecuting?.();
      },
    });
  } catch (error) {
    await recordRunEvent(store, request, context, "FAILED", failedRunData(error, classOf));
    return { status: "failed", result: null };
  }
  return finishWorkItem(store, request, context, repository, result);
}

/**
 * Goes on with a work item run that waits for a person (AWAITING_APPROVAL) once one decided: the item's agent run
 * continues with the decision through the durable resume (`continueWorkItem`), then the item ends as any does
 * (admission, tests, commit or rollback, receipt), or waits again on the agent's next such call.
 */
export async function continueWorkItemRequest(
  request: RunRequest,
  context: RunExecutionContext,
  options: RunExecutionOptions,
  decision: RunDecisionRequest,
): Promise<RunExecutionOutcome> {
  const store = context.store.forTenant(request.tenantId);
  const pending = await pendingApprovalsOf(store, request);
  const decided = (callIds: readonly string[]) =>
    callIds.filter((callId) => pending.some((call) => call.callId === callId));
  const approve = decided(decision.approve);
  const deny = decided(decision.deny);
  // A decision on nothing the item waits on (decided already, say) leaves it waiting as it was.
  if (approve.length === 0 && deny.length === 0) return { status: "awaiting_approval", result: null };
  let result: WorkRunResult | WorkItemAwaitingApproval;
  let repository: string;
  try {
    const { storeUrl, loaded, repository: itemRepository } = workItemOfRequest(request, context);
    repository = itemRepository;
    await recordRunEvent(store, request, context, "EXECUTING", {
      resumed: true,
      decided_by: decision.userId,
      decision_request_id: decision.requestId,
      approve,
      deny,
    });
    options.onExecuting?.();
    const overlay = await context.tenantConfiguration?.(request.tenantId);
    const { continueWorkItem } = await import("../../work/continue-work-item.js");
    result = await continueWorkItem({
      ...(overlay != null ? { configurationOverlay: overlay } : {}),
      itemPath: loaded.path,
      loaded,
      runId: request.runId,
      repository,
      commit: true,
      approve,
      deny,
      store: storeUrl,
      tenantId: request.tenantId,
      environment: context.environment,
      agentCatalog: context.agentCatalog,
      modelCallBudget: tenantModelCallBudget(context, request.tenantId),
      ...workItemProcessOptions(context, options),
    });
  } catch (error) {
    await recordRunEvent(store, request, context, "FAILED", failedRunData(error, classOf));
    return { status: "failed", result: null };
  }
  return finishWorkItem(store, request, context, repository, result);
}

/**
 * The work item a run request carries, checked again (it was checked when accepted, but stored by another process,
 * maybe of another version), with the repository it runs in and the run store URL its receipts go to.
 */
function workItemOfRequest(
  request: RunRequest,
  context: RunExecutionContext,
): { storeUrl: string; repository: string; loaded: ReturnType<typeof validateWorkItem> } {
  if (context.storeUrl === undefined) {
    throw new CharterError("INTERNAL_ERROR", "this worker was given no run store URL for work item runs", {
      details: { reason: "no_store_url" },
    });
  }
  return {
    storeUrl: context.storeUrl,
    repository: resolve(context.cwd, findServerRepository(context.repositories, request.repository ?? "")),
    loaded: validateWorkItem(request.item, join(context.cwd, `${request.runId}.work-item.json`), []),
  };
}

/** Where a work item's agent finds its home, binaries, environment and run folders, and what stops it. */
function workItemProcessOptions(context: RunExecutionContext, options: RunExecutionOptions) {
  return {
    ...(context.homeDirectory !== undefined ? { homeDirectory: context.homeDirectory } : {}),
    ...(context.binaryDirectory !== undefined ? { binaryDirectory: context.binaryDirectory } : {}),
    ...(context.processEnvironment !== undefined ? { processEnvironment: context.processEnvironment } : {}),
    ...(context.runsDirectory !== undefined ? { runsDirectory: context.runsDirectory } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  };
}

/** Records how a work item run stopped (AWAITING_APPROVAL) or ended (COMPLETED or FAILED, with its receipt). */
async function finishWorkItem(
  store: RunStore,
  request: RunRequest,
  context: RunExecutionContext,
  repository: string,
  result: WorkRunResult | WorkItemAwaitingApproval,
): Promise<RunExecutionOutcome> {
  if (result.status === "awaiting_approval") {
    await recordRunEvent(store, request, context, "AWAITING_APPROVAL", {
      pending_approvals: await pendingApprovalsOf(store, request),
    });
    return { status: "awaiting_approval", result: null };
  }
  const receipt = (await store.listWorkReceipts({ runId: request.runId, limit: 1 }))[0]?.receipt as
    | WorkReceipt
    | undefined;
  const cancelled = (await store.getRunRequest(request.runId))?.cancelRequestedAt != null;
  const recorded = {
    status: result.status,
    receipt_id: result.receipt_id,
    diffs: receipt === undefined ? {} : await diffsOf(repository, receipt),
    test_output: result.test_output ?? null,
  };
  const ended = result.status === "success";
  await recordRunEvent(store, request, context, ended ? "COMPLETED" : "FAILED", {
    outcome: result.status.toUpperCase(),
    work_item: recorded,
    latency_ms: context.environment.now() - request.requestedAt,
    error: ended
      ? null
      : {
          code: `WORK_ITEM_${result.status.toUpperCase()}`,
          class: null,
          message: result.denial_reason ?? result.error ?? result.status,
        },
    ...(cancelled && result.error === "interrupted" ? { cancelled: true } : {}),
  });
  return { status: ended ? "completed" : "failed", result: null };
}

/**
 * Each touched file's change as git's unified diff, between the item's before and after snapshots (kept in the
 * repository under `refs/charter/snapshots/<run-id>/`), whatever stayed in the working tree.
 */
async function diffsOf(repository: string, receipt: WorkReceipt): Promise<Record<string, string>> {
  const diffs: Record<string, string> = {};
  if (receipt.after_commit === null) return diffs;
  const paths = [...receipt.created_files, ...receipt.modified_files, ...receipt.deleted_files];
  for (const path of paths) {
    try {
      const diff = await gitText(
        ["diff", "--no-color", "--no-ext-diff", receipt.before_commit, receipt.after_commit, "--", path],
        { cwd: repository },
      );
      diffs[path] =
        diff.length > maxDiffCharacters ? `${diff.slice(0, maxDiffCharacters)}\n[diff truncated]` : diff;
    } catch {
      // A snapshot that is gone (a repository cleaned up since): the receipt still names the file and its hash.
    }
  }
  return diffs;
}

/**
 * A work item run whose process died: it cannot continue (its agent's working tree state is gone with it), so the
 * repository is recovered as `charter work recover` does (the working tree back at the before snapshot, a failure
 * receipt with `error: interrupted`), and the run ends FAILED.
 */
export async function recoverWorkItemRequest(
  request: RunRequest,
  context: RunExecutionContext,
): Promise<RunExecutionOutcome> {
  const store: RunStore = context.store.forTenant(request.tenantId);
  // What became of the repository, in the FAILED event: a recovery that could not run is said, never hidden (the
  // next item in that repository recovers it at the latest).
  let recovery: Readonly<Record<string, unknown>>;
  try {
    const repository = resolve(
      context.cwd,
      findServerRepository(context.repositories, request.repository ?? ""),
    );
    const [{ openWorkRepository }, { receiptKeeper }, { recoverInterruptedWork }] = await Promise.all([
      import("../../work/work-repository.js"),
      import("../../work/receipt-keeper.js"),
      import("../../work/recover-interrupted-work.js"),
    ]);
    const opened = await openWorkRepository(repository);
    const sources = {
      environment: context.environment,
      tenantId: request.tenantId,
      promptDirectory: context.cwd,
      ...(context.storeUrl !== undefined ? { store: context.storeUrl } : {}),
      ...(context.configPath !== undefined ? { configPath: context.configPath } : {}),
    };
    // The lease that expired says this run's worker is gone, wherever it ran: its lock is recovered even when its
    // pid and host name a process this machine cannot see.
    const recovered = await recoverInterruptedWork(
      opened,
      context.environment,
      receiptKeeper(opened, context.cwd, sources),
      sources,
      request.runId,
    );
    recovery = { status: recovered.kind === "recovered" ? "recovered" : "nothing_to_recover" };
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    recovery = { status: "failed", code: typeof code === "string" ? code : "INTERNAL_ERROR" };
  }
  await recordRunEvent(store, request, context, "FAILED", {
    outcome: "FAILURE",
    error: {
      code: "WORK_ITEM_FAILURE",
      class: null,
      message: "interrupted: the process running the item stopped",
    },
    recovery,
  });
  return { status: "failed", result: null };
}

/**
 * A work item run that waited for a person and was cancelled: its repository is given back (the working tree to the
 * before snapshot, a failure receipt with `error: interrupted`, the lock released), as for an item whose process
 * died. Only the lock of this run, held while it waits, is touched; anything else is left to the usual recovery.
 */
export async function releaseWaitingWorkItem(
  request: RunRequest,
  context: RunExecutionContext,
): Promise<void> {
  const repository = resolve(
    context.cwd,
    findServerRepository(context.repositories, request.repository ?? ""),
  );
  const [{ openWorkRepository }, { receiptKeeper }, { readWorkLock }, { rollBackWorkItem }] =
    await Promise.all([
      import("../../work/work-repository.js"),
      import("../../work/receipt-keeper.js"),
      import("../../work/work-lock.js"),
      import("../../work/roll-back-work-item.js"),
    ]);
  const opened = await openWorkRepository(repository);
  const record = await readWorkLock(opened);
  if (
    record?.format !== "charter-work-lock/1" ||
    record.run_id !== request.runId ||
    record.paused === undefined ||
    record.before === undefined
  ) {
    return;
  }
  const sources = {
    environment: context.environment,
    tenantId: request.tenantId,
    promptDirectory: context.cwd,
    ...(context.storeUrl !== undefined ? { store: context.storeUrl } : {}),
    ...(context.configPath !== undefined ? { configPath: context.configPath } : {}),
  };
  await rollBackWorkItem(
    opened,
    { ...record, before: record.before },
    context.environment,
    receiptKeeper(opened, context.cwd, sources),
    sources,
  );
}

/**
 * The end of a work item run that no process records any more (its process died after the item's agent run
 * ended), once the item has its receipt (written by the item, or by the recovery of the next item in the
 * repository): COMPLETED for `success`, else FAILED, marked `recovered`. Before the receipt exists the item may be
 * still testing its change, so nothing is recorded (false).
 */
export async function recordWorkItemEnd(
  store: RunStore,
  request: RunRequest,
  context: Pick<RunExecutionContext, "events" | "redactor">,
): Promise<boolean> {
  const stored = (await store.listWorkReceipts({ runId: request.runId, limit: 1 }))[0];
  if (stored === undefined) return false;
  const receipt = stored.receipt as WorkReceipt;
  const success = receipt.status === "success";
  await recordRunEvent(store, request, context, success ? "COMPLETED" : "FAILED", {
    outcome: receipt.status.toUpperCase(),
    recovered: true,
    work_item: { status: receipt.status, receipt_id: receipt.receipt_id, diffs: {}, test_output: null },
    error: success
      ? null
      : {
          code: `WORK_ITEM_${receipt.status.toUpperCase()}`,
          class: null,
          message: receipt.denial_reason ?? receipt.error ?? receipt.status,
        },
  });
  return true;
}
