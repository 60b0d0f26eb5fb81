import type { WorkflowDefinition } from "./workflow-definition.js";
import type { StepStatus, WorkflowStatus } from "./workflow-status.js";

/**
 * What the scheduler knows: each step's status, the order steps completed in, and why it stops starting steps.
 * A plain value (checkpointed with the step outputs): the scheduler never sees outputs, only statuses.
 */
export interface SchedulerState {
  readonly statuses: Readonly<Record<string, StepStatus>>;
  /** The completed steps, in the order they completed (rollback undoes them in reverse). */
  readonly completionOrder: readonly string[];
  /** A step failed under failFast or rollback: no new step starts. */
  readonly failing: boolean;
  /** The workflow was interrupted (a signal, or a step's run stopped for a reason a resume continues). */
  readonly interrupted: boolean;
  /** Under rollback, once no step runs any more: the steps still to compensate, next first. */
  readonly compensationQueue: readonly string[] | null;
  /** Set once the workflow has ended. */
  readonly status: WorkflowStatus | null;
}

export type SchedulerEvent =
  /** The workflow starts, or resumes (steps whose runs continue are `running` already). */
  | { readonly type: "start" }
  | {
      readonly type: "step_ended";
      readonly stepId: string;
      readonly status: "completed" | "failed" | "cancelled" | "interrupted";
    }
  | {
      readonly type: "compensation_ended";
      readonly stepId: string;
      readonly status: "compensated" | "compensation_failed" | "interrupted";
    }
  | { readonly type: "interrupt" };

export type SchedulerEffect =
  | { readonly type: "start_step"; readonly stepId: string }
  /** failFast and rollback: a running step is stopped (its run ends INTERRUPTED). */
  | { readonly type: "cancel_step"; readonly stepId: string }
  /** A step that will not run: a dependency failed or was skipped, or the workflow failed before it started. */
  | { readonly type: "skip_step"; readonly stepId: string; readonly reason: string }
  | { readonly type: "compensate"; readonly stepId: string }
  | { readonly type: "finish"; readonly status: WorkflowStatus };

export interface SchedulerOutput {
  readonly state: SchedulerState;
  readonly effects: readonly SchedulerEffect[];
}

export function initialSchedulerState(definition: WorkflowDefinition): SchedulerState {
  return {
    statuses: Object.fromEntries(definition.steps.map((step) => [step.id, "pending" as StepStatus])),
    completionOrder: [],
    failing: false,
    interrupted: false,
    compensationQueue: null,
    status: null,
  };
}

/**
 * The workflow scheduler as one pure function (the session's style, session/transition.ts): (state, event) ->
 * (next state, effects). It reads no clock and does no I/O; the engine (execute-workflow.ts) performs the effects
 * (running a step, cancelling one, compensating one) and feeds back what came of them.
 *
 * - A step starts when every step in its `dependsOn` has completed, in array order, never more than
 *   `maxConcurrency` at once; with `maxConcurrency: 1`, where dependencies only point back, that is array order.
 * - failFast: the first failure starts nothing more and cancels the running steps; once none runs, the steps not
 *   started are skipped and the workflow has failed.
 * - continueOnError: the steps downstream of a failure are skipped at once; every other step still runs; the
 *   workflow completes with errors if any step failed.
 * - rollback: as failFast, then the completed steps that declare `compensate` are compensated one at a time, in
 *   reverse order of completion: rolled back, or rollback failed when a compensation failed.
 * - An interrupt starts nothing more; once nothing runs the workflow is interrupted, to be resumed.
 */
export function transitionScheduler(
  definition: WorkflowDefinition,
  state: SchedulerState,
  event: SchedulerEvent,
): SchedulerOutput {
  if (state.status !== null) return { state, effects: [] };
  const effects: SchedulerEffect[] = [];
  let next: SchedulerState = state;
  switch (event.type) {
    case "start":
      break;
    case "interrupt":
      next = { ...next, interrupted: true };
      break;
    case "step_ended": {
      next = {
        ...next,
        statuses: { ...next.statuses, [event.stepId]: event.status },
        ...(event.status === "completed" ? { completionOrder: [...next.completionOrder, event.stepId] } : {}),
        ...(event.status === "interrupted" ? { interrupted: true } : {}),
      };
      if (event.status === "failed" && definition.failureStrategy !== "continueOnError" && !next.failing) {
        next = { ...next, failing: true };
        for (const step of definition.steps) {
          if (next.statuses[step.id] === "running") effects.push({ type: "cancel_step", stepId: step.id });
        }
      }
      break;
    }
    case "compensation_ended":
      next = {
        ...next,
        statuses: {
          ...next.statuses,
          [event.stepId]: event.status === "interrupted" ? "compensating" : event.status,
        },
        compensationQueue: (next.compensationQueue ?? []).filter((id) => id !== event.stepId),
        ...(event.status === "interrupted" ? { interrupted: true } : {}),
      };
      break;
  }
  return settle(definition, next, effects);
}

/** Skips what can no longer run, starts what can, and ends the workflow once nothing runs or can start. */
function settle(
  definition: WorkflowDefinition,
  state: SchedulerState,
  effects: SchedulerEffect[],
): SchedulerOutput {
  const statuses: Record<string, StepStatus> = { ...state.statuses };
  const skip = (stepId: string, reason: string) => {
    statuses[stepId] = "skipped";
    effects.push({ type: "skip_step", stepId, reason });
  };
  // Downstream of a step that did not complete, a pending step never runs (in array order, so a skip propagates).
  if (!state.interrupted) {
    for (const step of definition.steps) {
      if (statuses[step.id] !== "pending") continue;
      const blocked = step.dependsOn.find((id) =>
        ["failed", "skipped", "cancelled"].includes(statuses[id] ?? ""),
      );
      if (blocked !== undefined)
        skip(
          step.id,
          `dependency "${blocked}" ${statuses[blocked] === "failed" ? "failed" : `was ${statuses[blocked]}`}`,
        );
    }
  }
  const runningCount = () =>
    Object.values(statuses).filter((status) => status === "running" || status === "compensating").length;
  if (!state.failing && !state.interrupted) {
    for (const step of definition.steps) {
      if (runningCount() >= definition.maxConcurrency) break;
      if (statuses[step.id] !== "pending") continue;
      if (step.dependsOn.every((id) => statuses[id] === "completed")) {
        statuses[step.id] = "running";
        effects.push({ type: "start_step", stepId: step.id });
      }
    }
  }
  let next: SchedulerState = { ...state, statuses };
  if (runningCount() > 0) return { state: next, effects };

  if (next.interrupted) return finish(next, effects, "interrupted");
  if (next.failing) {
    for (const step of definition.steps) {
      if (statuses[step.id] === "pending") skip(step.id, "the workflow failed before it started");
    }
    next = { ...next, statuses };
    if (definition.failureStrategy !== "rollback") return finish(next, effects, "failed");
    const queue =
      next.compensationQueue ??
      [...next.completionOrder]
        .reverse()
        .filter((id) => definition.steps.find((step) => step.id === id)?.compensate != null);
    next = { ...next, compensationQueue: queue };
    const [first] = queue;
    if (first !== undefined) {
      next = { ...next, statuses: { ...statuses, [first]: "compensating" } };
      effects.push({ type: "compensate", stepId: first });
      return { state: next, effects };
    }
    const anyFailed = Object.values(statuses).includes("compensation_failed");
    return finish(next, effects, anyFailed ? "rollback_failed" : "rolled_back");
  }
  const allCompleted = definition.steps.every((step) => statuses[step.id] === "completed");
  return finish(next, effects, allCompleted ? "completed" : "completed_with_errors");
}

function finish(state: SchedulerState, effects: SchedulerEffect[], status: WorkflowStatus): SchedulerOutput {
  effects.push({ type: "finish", status });
  return { state: { ...state, status }, effects };
}
