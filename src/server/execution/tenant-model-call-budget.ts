import type { ModelCallBudget } from "../../runner/model-call-budget.js";
import { createModelCallBudget } from "../limits/tenant-budgets.js";
import type { RunExecutionContext } from "./run-execution-context.js";

/**
 * The budget every model call of a tenant's server run is admitted by and counted against (agent runs, workflow
 * steps, work items alike): the tenant's budgets from its configuration, else the server's.
 */
export function tenantModelCallBudget(context: RunExecutionContext, tenantId: string): ModelCallBudget {
  return createModelCallBudget({
    store: context.store,
    tenantId,
    environment: context.environment,
    ...(context.budgets !== undefined ? { serverBudgets: context.budgets } : {}),
  });
}
