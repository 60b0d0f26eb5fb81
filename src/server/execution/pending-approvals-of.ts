import { readPendingApprovals } from "../../runner/read-pending-approvals.js";
import type { PendingApproval } from "../../session/pending-approval.js";
import type { RunStore } from "../../store/run-store.js";
import type { WorkflowCheckpoint } from "../../workflow/workflow-checkpoint.js";
import { type RunRequestKind, runRequestKindOf } from "./run-request.js";

/**
 * A call a server run waits on a person for: the agent run that stopped for it (the run itself, a workflow step's
 * run, or a work item's agent run) and, in a workflow, the step. Arguments are as the transcript holds them
 * (secrets redacted).
 */
export interface ServerPendingApproval extends PendingApproval {
  /** The workflow step whose agent run waits (null for an agent run or a work item). */
  readonly stepId: string | null;
  /** The agent run that waits on the call: the run itself, a workflow step's run, or the work item's run. */
  readonly runId: string;
}

type PendingStore = Pick<RunStore, "getRun" | "latestCheckpoint" | "readEntries">;

/**
 * The calls a server run waits on, whatever it runs: one mechanism for agent runs, workflow runs and work item
 * runs. An agent run and a work item (whose run id is its agent's run) wait on their own run's pending calls; a
 * workflow waits on those of each step whose run stopped for a decision (read from the workflow's latest
 * checkpoint, which names each step's run). Empty when nothing waits.
 */
export async function pendingApprovalsOf(
  store: PendingStore,
  request: { readonly runId: string; readonly kind?: RunRequestKind },
): Promise<ServerPendingApproval[]> {
  if (runRequestKindOf(request) !== "workflow") return awaitingCalls(store, request.runId, null);
  const checkpoint = (await store.latestCheckpoint(request.runId))?.document as
    | Partial<WorkflowCheckpoint>
    | undefined;
  const pending: ServerPendingApproval[] = [];
  for (const [stepId, step] of Object.entries(checkpoint?.steps ?? {})) {
    // Only a step that stopped where a resume continues it can be waiting (a completed step never is).
    if (step.runId === null || (step.status !== "interrupted" && step.status !== "running")) continue;
    pending.push(...(await awaitingCalls(store, step.runId, stepId)));
  }
  return pending;
}

async function awaitingCalls(
  store: PendingStore,
  runId: string,
  stepId: string | null,
): Promise<ServerPendingApproval[]> {
  const run = await store.getRun(runId);
  if (run?.status !== "awaiting_approval") return [];
  const calls = await readPendingApprovals(store, runId);
  return calls.map((call) => ({ ...call, stepId, runId }));
}

/**
 * Which agent run each decided call belongs to (`{ <agent run id>: { approve, deny } }`), for the calls the run
 * waits on now; a call it does not wait on (decided meanwhile) is left out.
 */
export function decisionsByRun(
  pending: readonly ServerPendingApproval[],
  decision: {
    readonly approve: readonly string[];
    readonly deny: readonly string[];
    /** The workflow step the calls belong to, when the caller named it (two steps' runs may use one call id). */
    readonly stepId?: string;
  },
): Record<string, { approve: string[]; deny: string[] }> {
  const byRun: Record<string, { approve: string[]; deny: string[] }> = {};
  for (const [list, callIds] of [
    ["approve", decision.approve],
    ["deny", decision.deny],
  ] as const) {
    for (const callId of callIds) {
      const call = pending.find(
        (candidate) =>
          candidate.callId === callId &&
          (decision.stepId === undefined || candidate.stepId === decision.stepId),
      );
      if (call === undefined) continue;
      byRun[call.runId] ??= { approve: [], deny: [] };
      byRun[call.runId]?.[list].push(callId);
    }
  }
  return byRun;
}
