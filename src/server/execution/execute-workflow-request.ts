import { CharterError } from "../../foundation/charter-error.js";
import type { ErrorCode } from "../../foundation/error-codes.js";
import { settledRunEventTypes } from "../../store/run-event-records.js";
import type { RunStore } from "../../store/run-store.js";
import { resumeWorkflow } from "../../workflow/resume-workflow.js";
import { runWorkflow } from "../../workflow/run-workflow.js";
import type { WorkflowResult } from "../../workflow/workflow-result.js";
import { failureClassOf } from "../failure-class.js";
import type { RunExecutionOptions, RunExecutionOutcome } from "./execute-run-request.js";
import { findServerWorkflow } from "./find-server-workflow.js";
import { decisionsByRun, pendingApprovalsOf } from "./pending-approvals-of.js";
import { cancelledRunData, failedRunData, recordRunEvent } from "./record-run-event.js";
import { serverToolPermissions } from "./role-tool-classes.js";
import type { RunExecutionContext } from "./run-execution-context.js";
import type { RunDecisionRequest, RunRequest } from "./run-request.js";
import { tenantModelCallBudget } from "./tenant-model-call-budget.js";

const classOf = (code: string) => failureClassOf(code as ErrorCode);

function storeUrlOf(context: RunExecutionContext): string {
  if (context.storeUrl === undefined) {
    throw new CharterError("INTERNAL_ERROR", "this worker was given no run store URL for workflow runs", {
      details: { reason: "no_store_url" },
    });
  }
  return context.storeUrl;
}

/**
 * Executes a workflow run the server accepted: the workflow named in the request, from the server's workflows
 * folder, run as `charter workflow run` runs it (its own run of kind `workflow` under the request's run id, every
 * step a run of its own), for the request's tenant and correlation id. Lifecycle: ROUTED (the workflow), EXECUTING,
 * then COMPLETED when every step completed, else FAILED with the workflow's status and first error. Never throws
 * for the workflow's failure.
 */
export async function executeWorkflowRequest(
  request: RunRequest,
  context: RunExecutionContext,
  options: RunExecutionOptions = {},
): Promise<RunExecutionOutcome> {
  const store = context.store.forTenant(request.tenantId);
  const stopped = await stoppedBeforeStart(store, request, context);
  if (stopped !== null) return stopped;
  // Stored already: another execution started it; it is that execution's (a takeover continues it).
  if ((await store.getRun(request.runId)) !== null) return { status: "suspended", result: null };
  const name = request.workflow ?? "";
  let result: WorkflowResult;
  try {
    const workflowPath = await findServerWorkflow(context.workflowsDirectory, name);
    await recordRunEvent(store, request, context, "ROUTED", { workflow: name, kind: "workflow" });
    await recordRunEvent(store, request, context, "EXECUTING", {});
    options.onExecuting?.();
    const overlay = await context.tenantConfiguration?.(request.tenantId);
    result = await runWorkflow({
      ...(overlay != null ? { configurationOverlay: overlay } : {}),
      workflowPath,
      input: request.input ?? {},
      runId: request.runId,
      cwd: context.cwd,
      store: storeUrlOf(context),
      tenantId: request.tenantId,
      correlationId: request.correlationId,
      agentCatalog: context.agentCatalog,
      environment: context.environment,
      toolPermissions: serverToolPermissions(request.role, context.roleToolClasses),
      modelCallBudget: tenantModelCallBudget(context, request.tenantId),
      ...sharedOptions(context),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
  } catch (error) {
    await recordRunEvent(store, request, context, "FAILED", failedRunData(error, classOf));
    return { status: "failed", result: null };
  }
  return finishWorkflow(store, request, context, result);
}

/**
 * Continues a workflow run from its latest checkpoint, as `charter workflow resume` does: completed steps are never
 * run again, a running step's run continues where it stopped. Without a decision its process is gone (or drained);
 * with one, a person decided calls its steps' runs wait on (AWAITING_APPROVAL), and each such step's run continues
 * with the decision (an approved call runs once, a denied one is a tool failure its model sees).
 */
export async function continueWorkflowRequest(
  request: RunRequest,
  context: RunExecutionContext,
  options: RunExecutionOptions = {},
  decision?: RunDecisionRequest,
): Promise<RunExecutionOutcome> {
  const store = context.store.forTenant(request.tenantId);
  let stepDecisions: Record<string, { approve: string[]; deny: string[] }> | undefined;
  if (decision !== undefined) {
    // The calls are matched to the step runs that wait on them now: a decision that names none of them (decided
    // already, say) leaves the workflow waiting as it was.
    stepDecisions = decisionsByRun(await pendingApprovalsOf(store, request), decision);
    if (Object.keys(stepDecisions).length === 0) return { status: "awaiting_approval", result: null };
  }
  let result: WorkflowResult;
  try {
    await recordRunEvent(
      store,
      request,
      context,
      "EXECUTING",
      decision === undefined
        ? { resumed: true, taken_over: true }
        : {
            resumed: true,
            decided_by: decision.userId,
            decision_request_id: decision.requestId,
            approve: decision.approve,
            deny: decision.deny,
            ...(decision.stepId !== undefined ? { step_id: decision.stepId } : {}),
          },
    );
    options.onExecuting?.();
    const overlay = await context.tenantConfiguration?.(request.tenantId);
    result = await resumeWorkflow({
      ...(overlay != null ? { configurationOverlay: overlay } : {}),
      workflowRunId: request.runId,
      cwd: context.cwd,
      store: storeUrlOf(context),
      tenantId: request.tenantId,
      environment: context.environment,
      toolPermissions: serverToolPermissions(request.role, context.roleToolClasses),
      modelCallBudget: tenantModelCallBudget(context, request.tenantId),
      ...(stepDecisions !== undefined ? { stepDecisions } : {}),
      ...sharedOptions(context),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
  } catch (error) {
    // Another worker resumed it first: the run is that worker's.
    if (CharterError.isInstance(error) && error.details.reason === "concurrent_resume") {
      return { status: "suspended", result: null };
    }
    await recordRunEvent(store, request, context, "FAILED", failedRunData(error, classOf));
    return { status: "failed", result: null };
  }
  return finishWorkflow(store, request, context, result);
}

function sharedOptions(context: RunExecutionContext) {
  return {
    ...(context.configPath !== undefined ? { configPath: context.configPath } : {}),
    ...(context.homeDirectory !== undefined ? { homeDirectory: context.homeDirectory } : {}),
    ...(context.etcDirectory !== undefined ? { etcDirectory: context.etcDirectory } : {}),
    ...(context.binaryDirectory !== undefined ? { binaryDirectory: context.binaryDirectory } : {}),
    ...(context.processEnvironment !== undefined ? { processEnvironment: context.processEnvironment } : {}),
    ...(context.runsDirectory !== undefined ? { runsDirectory: context.runsDirectory } : {}),
  };
}

/**
 * A run whose lifecycle is over already (cancelled while queued, by another process) is not started; a run
 * cancelled while queued ends without running. Shared by workflow and work item runs.
 */
export async function stoppedBeforeStart(
  store: RunStore,
  request: RunRequest,
  context: RunExecutionContext,
): Promise<RunExecutionOutcome | null> {
  const record = await store.getRunRequest(request.runId);
  if (record !== null && settledRunEventTypes.includes(record.state)) {
    return { status: record.state === "COMPLETED" ? "completed" : "failed", result: null };
  }
  if (record?.cancelRequestedAt != null) {
    await recordRunEvent(store, request, context, "FAILED", cancelledRunData);
    return { status: "failed", result: null };
  }
  return null;
}

async function finishWorkflow(
  store: RunStore,
  request: RunRequest,
  context: RunExecutionContext,
  result: WorkflowResult,
): Promise<RunExecutionOutcome> {
  const cancelled = (await store.getRunRequest(request.runId))?.cancelRequestedAt != null;
  if (result.status === "interrupted" && !cancelled) {
    // Stopped because steps' runs wait for a person's decision: the workflow waits with them (the sweep leaves a
    // workflow run at AWAITING_APPROVAL alone) until `POST /v1/workflows/runs/:id/approvals` continues it.
    const pending = await pendingApprovalsOf(store, request);
    if (pending.length > 0) {
      await recordRunEvent(store, request, context, "AWAITING_APPROVAL", {
        pending_approvals: pending,
        steps: result.steps.map((step) => ({ id: step.id, status: step.status, run_id: step.runId })),
      });
      return { status: "awaiting_approval", result: null };
    }
    // Stopped at a checkpoint without being cancelled (the process drains): another worker continues it.
    return { status: "suspended", result: null };
  }
  const summary = {
    workflow_status: result.status,
    outcome: result.status === "completed" ? "COMPLETED" : result.status.toUpperCase(),
    steps: result.steps.map((step) => ({ id: step.id, status: step.status, run_id: step.runId })),
    token_usage: {
      prompt_tokens: result.accounting.tokens.input,
      completion_tokens: result.accounting.tokens.output,
      total_tokens: result.accounting.tokens.input + result.accounting.tokens.output,
    },
    latency_ms: context.environment.now() - request.requestedAt,
  };
  if (result.status === "completed") {
    await recordRunEvent(store, request, context, "COMPLETED", { ...summary, error: null });
    return { status: "completed", result: null };
  }
  const first = result.errors[0];
  const error =
    result.status === "interrupted"
      ? cancelledRunData.error
      : {
          code: first?.code ?? "WORKFLOW_FAILED",
          class: first === undefined ? null : classOf(first.code),
          message: first?.message ?? `the workflow ended ${result.status}`,
        };
  await recordRunEvent(store, request, context, "FAILED", {
    ...summary,
    error,
    ...(cancelled && result.status === "interrupted" ? { cancelled: true } : {}),
  });
  return { status: "failed", result: null };
}
