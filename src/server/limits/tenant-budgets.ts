import type { BudgetsConfiguration } from "../../config/server-configuration-schema.js";
import { CharterError } from "../../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { ModelCallBudget } from "../../runner/model-call-budget.js";
import type { RunStore } from "../../store/run-store.js";
import type { TenantBudget, TenantConfiguration } from "../tenants/tenant-configuration.js";

export type BudgetName = "tokens" | "costUsd";

const budgetNames: readonly BudgetName[] = ["tokens", "costUsd"];

const millisecondsPerDay = 86_400_000;

/** One budget of a tenant in its current period, with what the tenant's runs consumed in it so far. */
export interface BudgetStanding {
  readonly budget: BudgetName;
  readonly limit: number;
  readonly period: "day" | "month";
  readonly used: number;
  /** The period's bounds in milliseconds (UTC calendar day or month): from its start, up to its end. */
  readonly periodStart: number;
  readonly periodEnd: number;
  /** Whether nothing is left: the usage reached the limit. */
  readonly exhausted: boolean;
}

/** The UTC calendar period holding `now`: its start and the start of the next one. */
export function budgetPeriod(period: "day" | "month", now: number): { start: number; end: number } {
  const date = new Date(now);
  if (period === "day") {
    const start = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
    return { start, end: start + millisecondsPerDay };
  }
  return {
    start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1),
    end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1),
  };
}

/** 00:00 UTC of the day holding `now`: the row a model call's usage is added to. */
export function usageDayStart(now: number): number {
  return Math.floor(now / millisecondsPerDay) * millisecondsPerDay;
}

/**
 * A tenant's budgets and what they stand at: resolved tenant first (its configuration's `budgets`, budget by
 * budget; null there is "none"), then the server's `server.budgets`. Usage is read from the run store, where every
 * model call of the tenant's server runs adds to its UTC day.
 */
export async function tenantBudgetStandings(options: {
  readonly store: RunStore;
  readonly tenantId: string;
  readonly environment: RuntimeEnvironment;
  readonly serverBudgets?: BudgetsConfiguration;
}): Promise<BudgetStanding[]> {
  const tenantStore = options.store.forTenant(options.tenantId);
  const tenant = (await tenantStore.getTenantConfiguration())?.configuration as
    | TenantConfiguration
    | undefined;
  const now = options.environment.now();
  const standings: BudgetStanding[] = [];
  const usageByPeriod = new Map<string, Promise<{ tokens: number; costUsd: number }>>();
  for (const budget of budgetNames) {
    const own = tenant?.budgets?.[budget];
    const configured: TenantBudget | null | undefined =
      own !== undefined ? own : options.serverBudgets?.[budget];
    if (configured == null) continue;
    const { start, end } = budgetPeriod(configured.period, now);
    let usage = usageByPeriod.get(configured.period);
    if (usage === undefined) {
      usage = tenantStore.readBudgetUsage({ from: start, to: end });
      usageByPeriod.set(configured.period, usage);
    }
    const used = (await usage)[budget];
    standings.push({
      budget,
      limit: configured.limit,
      period: configured.period,
      used,
      periodStart: start,
      periodEnd: end,
      exhausted: used >= configured.limit,
    });
  }
  return standings;
}

function budgetWords(standing: BudgetStanding): string {
  const what = standing.budget === "tokens" ? "token" : "cost (USD)";
  const used = standing.budget === "tokens" ? String(standing.used) : standing.used.toFixed(6);
  return `the tenant's ${what} budget for the ${standing.period} is spent: ${used} used of ${standing.limit}; it renews at ${new Date(standing.periodEnd).toISOString()}`;
}

/**
 * Refuses to start a run of a tenant whose budget is spent: `TENANT_BUDGET_EXHAUSTED` (429, class
 * `rate_limit_exceeded`) with `Retry-After` until the period ends, naming the budget, its limit, the usage and the
 * period's end. For every route that starts a run (runs, chat completions, workflow and work-item runs).
 */
export async function checkTenantBudgets(
  options: Parameters<typeof tenantBudgetStandings>[0],
): Promise<void> {
  const standings = await tenantBudgetStandings(options);
  const spent = standings.filter((standing) => standing.exhausted);
  if (spent.length === 0) return;
  // The budget that renews last decides when a retry can succeed.
  const decisive = spent.reduce((latest, standing) =>
    standing.periodEnd > latest.periodEnd ? standing : latest,
  );
  const now = options.environment.now();
  throw new CharterError("TENANT_BUDGET_EXHAUSTED", `${budgetWords(decisive)}; no run starts until then`, {
    details: {
      budget: decisive.budget,
      limit: decisive.limit,
      used: decisive.used,
      period: decisive.period,
      periodEnd: new Date(decisive.periodEnd).toISOString(),
      retryAfterSeconds: Math.max(1, Math.ceil((decisive.periodEnd - now) / 1000)),
      budgets: spent.map((standing) => standing.budget),
    },
  });
}

/**
 * The runner's `modelCallBudget` for a server run of a tenant: before each model call, the tenant's budgets as they
 * stand (every run of the tenant adds to the same usage, in every process on the store); after it, what it consumed
 * added to the day's usage. A tenant with no budget still has its usage counted (for statistics and for a budget set
 * later in the period).
 */
export function createModelCallBudget(options: Parameters<typeof tenantBudgetStandings>[0]): ModelCallBudget {
  const tenantStore = options.store.forTenant(options.tenantId);
  return {
    async admit() {
      const spent = (await tenantBudgetStandings(options)).find((standing) => standing.exhausted);
      return spent === undefined ? null : `${budgetWords(spent)}; the run stops before its next model call`;
    },
    async record({ tokens, costUsd }) {
      await tenantStore.addBudgetUsage({
        dayStart: usageDayStart(options.environment.now()),
        tokens,
        costUsd: costUsd ?? 0,
      });
    },
  };
}
