import type { WorkRunResult } from "./work-run-result.js";

/** An item of a plan that never ran: a dependency is not in the plan, or did not succeed, or the plan stopped. */
export interface BlockedWorkItemResult {
  readonly status: "blocked";
  readonly work_item_id: string;
  /** The dependency that blocked it (null when the plan was interrupted before its level). */
  readonly blocked_by: string | null;
  /** `Blocked: dependency b ended conflict`, `Blocked: dependency x is not in the plan`. */
  readonly error: string;
}

export type WorkPlanItemResult = WorkRunResult | BlockedWorkItemResult;

/** What `charter work plan` prints: the plan's status and each item's result, level by level, in id order. */
export interface WorkPlanResult {
  /** `success` only when every item succeeded. */
  readonly status: "success" | "failure";
  readonly plan_id: string;
  /** The repository's working tree. */
  readonly repository: string;
  /** The item ids of each level, in id order. */
  readonly levels: readonly (readonly string[])[];
  /** HEAD's commit after the plan. */
  readonly head_commit: string;
  readonly results: readonly WorkPlanItemResult[];
}
