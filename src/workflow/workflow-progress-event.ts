import type { StepStatus, WorkflowStatus } from "./workflow-status.js";

/** What a workflow reports as it goes (the CLI prints them on stderr): each step's start and end, skips, the end. */
export type WorkflowProgressEvent =
  | {
      readonly type: "step_started" | "compensation_started";
      readonly stepId: string;
      readonly runId: string | null;
      /** The step was running when the workflow stopped and now continues. */
      readonly continued?: boolean;
    }
  | {
      readonly type: "step_ended";
      readonly stepId: string;
      readonly status: StepStatus;
      readonly runId: string | null;
      readonly durationMs: number;
    }
  | { readonly type: "step_skipped"; readonly stepId: string; readonly reason: string }
  | { readonly type: "compensation_ended"; readonly stepId: string; readonly status: string }
  | { readonly type: "workflow_ended"; readonly status: WorkflowStatus };
