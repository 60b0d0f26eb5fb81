/** How a workflow run ended (`interrupted`: it stopped where `charter workflow resume` continues it). */
export const workflowStatuses = [
  "completed",
  "failed",
  "completed_with_errors",
  "rolled_back",
  "rollback_failed",
  "interrupted",
] as const;
export type WorkflowStatus = (typeof workflowStatuses)[number];

/**
 * Where a step stands. `pending` and `interrupted` appear only in an interrupted workflow (a step not started yet,
 * and one whose run stopped with the workflow: a resume continues that run); `running` and `compensating` only
 * while the workflow runs.
 */
export const stepStatuses = [
  "pending",
  "running",
  "completed",
  "failed",
  "skipped",
  "cancelled",
  "interrupted",
  "compensating",
  "compensated",
  "compensation_failed",
] as const;
export type StepStatus = (typeof stepStatuses)[number];
