import type { RunTotals } from "../store/run-record.js";
import type { WorkflowStepOutput, WorkflowStepRecord } from "./workflow-checkpoint.js";
import type { JsonValue, WorkflowDefinition } from "./workflow-definition.js";
import type { WorkflowError, WorkflowResult } from "./workflow-result.js";
import type { StepStatus, WorkflowStatus } from "./workflow-status.js";

/** Where a workflow stands, as its engine keeps it and its checkpoints record it. */
export interface WorkflowStanding {
  readonly statuses: Readonly<Record<string, StepStatus>>;
  readonly records: Readonly<Record<string, WorkflowStepRecord>>;
  readonly outputs: Readonly<Record<string, WorkflowStepOutput>>;
  readonly totals: RunTotals;
}

/** Every error of the workflow's steps: a failed step's, a failed compensation's (a cancelled step's is its status). */
export function collectWorkflowErrors(
  definition: WorkflowDefinition,
  standing: WorkflowStanding,
): WorkflowError[] {
  const errors: WorkflowError[] = [];
  for (const step of definition.steps) {
    const record = standing.records[step.id];
    const status = standing.statuses[step.id];
    if (record?.error != null && status === "failed")
      errors.push({ stepId: step.id, phase: "step", ...record.error });
    if (record?.compensation?.error != null && status === "compensation_failed")
      errors.push({ stepId: step.id, phase: "compensation", ...record.compensation.error });
  }
  return errors;
}

/** The result document: the steps in array order, with their runs, outcomes, reports and durations. */
export function buildWorkflowResult<Status extends string = WorkflowStatus>(
  definition: WorkflowDefinition,
  standing: WorkflowStanding,
  end: {
    readonly workflowRunId: string;
    readonly status: Status;
    readonly errors: readonly WorkflowError[];
    readonly output: JsonValue | null;
    readonly headHash: string;
    readonly entries: number;
  },
): Omit<WorkflowResult, "status"> & { readonly status: Status } {
  const { totals } = standing;
  return {
    workflowRunId: end.workflowRunId,
    workflowId: definition.id,
    status: end.status,
    steps: definition.steps.map((step) => {
      const record = standing.records[step.id];
      return {
        id: step.id,
        status: standing.statuses[step.id] ?? "pending",
        runId: record?.runId ?? null,
        outcome: record?.outcome ?? null,
        report: standing.outputs[step.id]?.report ?? null,
        durationMs:
          record?.startedAt != null && record.endedAt != null ? record.endedAt - record.startedAt : null,
      };
    }),
    errors: end.errors,
    output: end.output,
    accounting: {
      turns: totals.turns,
      tokens: { input: totals.tokensIn, output: totals.tokensOut },
      costUsd: totals.costUsd,
    },
    headHash: end.headHash,
    entries: end.entries,
  };
}
