import { CharterError } from "../foundation/charter-error.js";
import { isRunAbandoned } from "../runner/run-owner.js";
import type { RunStore } from "../store/run-store.js";
import { buildWorkflowResult, collectWorkflowErrors } from "./build-workflow-result.js";
import { parseWorkflowCheckpoint } from "./workflow-checkpoint.js";
import { readWorkflowContract } from "./workflow-contract.js";
import type { JsonValue } from "./workflow-definition.js";
import type { WorkflowError, WorkflowResult } from "./workflow-result.js";
import type { WorkflowStatus } from "./workflow-status.js";

/** `charter workflow show`: the result document of a stored workflow run, ended or not. */
export interface StoredWorkflow extends Omit<WorkflowResult, "status"> {
  /** How it ended; `running` while it runs, `abandoned` when it is running but its process is gone. */
  readonly status: WorkflowStatus | "running" | "abandoned";
  /** For a workflow run that can be continued: the command that continues it. */
  readonly resumeCommand: string | null;
  readonly tenantId: string | null;
  readonly createdAt: string;
  readonly finishedAt: string | null;
}

/**
 * Reads a stored workflow run as its result document: the steps from its latest checkpoint (checked against its
 * schema), the errors and output from its WORKFLOW_END entry once it ended. Throws RUN_NOT_FOUND, or
 * ARGUMENT_INVALID for a run that is not a workflow run.
 */
export async function readStoredWorkflow(
  store: RunStore,
  runId: string,
  now = Date.now(),
): Promise<StoredWorkflow> {
  const run = await store.getRun(runId);
  if (run === null) {
    throw new CharterError("RUN_NOT_FOUND", `no run ${runId} in ${store.location}`, { details: { runId } });
  }
  if (run.kind !== "workflow") {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `run ${runId} is not a workflow run: charter runs show ${runId} shows it`,
      {
        details: { runId, reason: "not_a_workflow_run" },
      },
    );
  }
  const { definition } = readWorkflowContract(run.contract, runId);
  const stored = await store.latestCheckpoint(runId);
  if (stored === null) {
    throw new CharterError("WORKFLOW_CHECKPOINT_INVALID", `workflow run ${runId} has no checkpoint`, {
      details: { runId, key: "(document)", problem: "missing" },
    });
  }
  const checkpoint = parseWorkflowCheckpoint(
    stored.document,
    definition.steps.map((step) => step.id),
    { runId, seq: stored.seq },
  );
  const standing = {
    statuses: checkpoint.scheduler.statuses,
    records: checkpoint.steps,
    outputs: checkpoint.stepOutputs,
    totals: checkpoint.totals,
  };
  const ended = run.status === "running" ? null : await readWorkflowEnd(store, runId, run.entryCount);
  const abandoned = isRunAbandoned(run, now);
  const status = ended?.status ?? (abandoned ? "abandoned" : "running");
  const tenantFlag = run.tenantId === null ? "" : ` --tenant ${run.tenantId}`;
  return {
    ...buildWorkflowResult<StoredWorkflow["status"]>(definition, standing, {
      workflowRunId: runId,
      status,
      errors: ended?.errors ?? collectWorkflowErrors(definition, standing),
      output: ended?.output ?? null,
      headHash: run.headHash,
      entries: run.entryCount,
    }),
    resumeCommand:
      status === "interrupted" || abandoned ? `charter workflow resume ${runId}${tenantFlag}` : null,
    tenantId: run.tenantId,
    createdAt: new Date(run.createdAt).toISOString(),
    finishedAt: run.finishedAt === null ? null : new Date(run.finishedAt).toISOString(),
  };
}

/** What the WORKFLOW_END entry (the last one of an ended workflow run) records. */
async function readWorkflowEnd(
  store: RunStore,
  runId: string,
  entryCount: number,
): Promise<{ status: WorkflowStatus; errors: WorkflowError[]; output: JsonValue | null } | null> {
  for await (const entry of store.readEntries(runId, { fromSeq: Math.max(entryCount - 1, 0) })) {
    if (entry.state === "WORKFLOW_END")
      return entry.result as { status: WorkflowStatus; errors: WorkflowError[]; output: JsonValue | null };
  }
  return null;
}
