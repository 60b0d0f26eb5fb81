import type { JsonValue } from "./workflow-definition.js";
import type { StepStatus, WorkflowStatus } from "./workflow-status.js";

/** One step as a workflow's result reports it. */
export interface WorkflowStepResult {
  readonly id: string;
  readonly status: StepStatus;
  /** The step's agent run (null for a tool step, or a step that did not start). */
  readonly runId: string | null;
  /** The run's outcome, or a tool step's result status (`ok`, `failed`). */
  readonly outcome: string | null;
  /** The step's report (a completed step's), else null. */
  readonly report: string | null;
  readonly durationMs: number | null;
}

/** A problem the workflow met: a step or compensation that failed, or an output that could not be rendered. */
export interface WorkflowError {
  readonly stepId: string | null;
  readonly phase: "step" | "compensation" | "output";
  readonly code: string;
  readonly message: string;
}

/** What `runWorkflow` and `resumeWorkflow` return (and `charter workflow run --json` prints). */
export interface WorkflowResult {
  readonly workflowRunId: string;
  readonly workflowId: string;
  readonly status: WorkflowStatus;
  readonly steps: readonly WorkflowStepResult[];
  readonly errors: readonly WorkflowError[];
  /** The workflow's `output`, rendered once every step completed; null otherwise or when it declares none. */
  readonly output: JsonValue | null;
  /** Over every step's run and compensation (a tool step consumes no tokens). */
  readonly accounting: {
    readonly turns: number;
    readonly tokens: { readonly input: number; readonly output: number };
    readonly costUsd: number;
  };
  /** The workflow transcript's head hash and length. */
  readonly headHash: string;
  readonly entries: number;
}
