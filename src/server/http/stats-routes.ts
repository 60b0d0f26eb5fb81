import type { FastifyPluginAsync } from "fastify";
import type { BudgetsConfiguration } from "../../config/server-configuration-schema.js";
import { CharterError } from "../../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { RunStore } from "../../store/run-store.js";
import { type BudgetStanding, tenantBudgetStandings } from "../limits/tenant-budgets.js";
import { prometheusMetrics } from "../stats/prometheus-metrics.js";
import {
  maximumStatisticsBuckets,
  runStatistics,
  type StatisticsGrouping,
  statisticsGroupings,
} from "../stats/run-statistics.js";
import { authenticatedErrors } from "./error-schema.js";
import { identityOf } from "./request-identity.js";

export interface StatsRoutesOptions {
  readonly store: RunStore;
  readonly environment: RuntimeEnvironment;
  /** `server.budgets`: the tenant's budgets are shown with what they stand at; default none. */
  readonly budgets?: BudgetsConfiguration;
}

/** The tenant's budgets in their current periods, as `/v1/stats` shows them. */
function budgetView(standing: BudgetStanding) {
  return {
    budget: standing.budget,
    limit: standing.limit,
    period: standing.period,
    used: standing.used,
    periodStart: new Date(standing.periodStart).toISOString(),
    periodEnd: new Date(standing.periodEnd).toISOString(),
    exhausted: standing.exhausted,
  };
}

/** The same as Prometheus gauges: used and limit per budget. */
function budgetMetrics(standings: readonly BudgetStanding[]): string {
  if (standings.length === 0) return "";
  const lines = [
    "# HELP charter_budget_used What the tenant's runs consumed of a budget in its current period.",
    "# TYPE charter_budget_used gauge",
    ...standings.map(
      (standing) =>
        `charter_budget_used{budget="${standing.budget}",period="${standing.period}"} ${standing.used}`,
    ),
    "# HELP charter_budget_limit A budget's limit per period.",
    "# TYPE charter_budget_limit gauge",
    ...standings.map(
      (standing) =>
        `charter_budget_limit{budget="${standing.budget}",period="${standing.period}"} ${standing.limit}`,
    ),
  ];
  return `${lines.join("\n")}\n`;
}

const day = 24 * 60 * 60 * 1000;

function instant(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed)) {
    throw new CharterError("REQUEST_INVALID", `${name} is not a date and time (2026-01-01T00:00:00Z)`, {
      details: { issues: [`querystring/${name} is not a date-time`] },
    });
  }
  return parsed;
}

/** `GET /v1/stats`: the caller's tenant's run statistics over a time range (any role). */
export const statsRoutes: FastifyPluginAsync<StatsRoutesOptions> = async (app, options) => {
  const { store, environment } = options;
  const standings = (tenantId: string) =>
    tenantBudgetStandings({
      store,
      tenantId,
      environment,
      ...(options.budgets !== undefined ? { serverBudgets: options.budgets } : {}),
    });
  app.get<{
    Querystring: { from?: string; to?: string; groupBy?: StatisticsGrouping; bucketMinutes?: number };
  }>(
    "/v1/stats",
    {
      config: { permission: "stats.read" },
      schema: {
        summary: "The tenant's run statistics between from and to (default the last 24 hours)",
        tags: ["stats"],
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: {
            from: {
              type: "string",
              description: "ISO 8601 date and time, inclusive; default to minus 24 hours",
            },
            to: { type: "string", description: "ISO 8601 date and time, exclusive; default now" },
            groupBy: { type: "string", enum: [...statisticsGroupings] },
            bucketMinutes: {
              type: "integer",
              minimum: 1,
              maximum: 10080,
              description: `Adds series: the figures per bucket of this many minutes (at most ${maximumStatisticsBuckets} buckets)`,
            },
          },
        },
        response: {
          200: { type: "object", additionalProperties: true },
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const to = instant(request.query.to, "to", environment.now());
      const from = instant(request.query.from, "from", to - day);
      if (from >= to) {
        throw new CharterError("REQUEST_INVALID", "from must be before to", {
          details: { issues: ["querystring/from must be before querystring/to"] },
        });
      }
      const { bucketMinutes } = request.query;
      const bucketMilliseconds = bucketMinutes === undefined ? undefined : bucketMinutes * 60_000;
      if (
        bucketMilliseconds !== undefined &&
        Math.ceil((to - from) / bucketMilliseconds) > maximumStatisticsBuckets
      ) {
        throw new CharterError(
          "REQUEST_INVALID",
          `from..to holds more than ${maximumStatisticsBuckets} buckets of ${bucketMinutes} minutes: choose a larger bucketMinutes or a shorter range`,
          { details: { issues: ["querystring/bucketMinutes makes too many buckets"] } },
        );
      }
      const tenantStore = store.forTenant(identityOf(request).tenantId);
      const statistics = await runStatistics(tenantStore, {
        from,
        to,
        ...(request.query.groupBy !== undefined ? { groupBy: request.query.groupBy } : {}),
        ...(bucketMilliseconds !== undefined ? { bucketMilliseconds } : {}),
      });
      return {
        ...statistics,
        budgets: (await standings(identityOf(request).tenantId)).map(budgetView),
        from: new Date(statistics.from).toISOString(),
        to: new Date(statistics.to).toISOString(),
        ...(statistics.series !== undefined
          ? {
              series: statistics.series.map((bucket) => ({
                ...bucket,
                from: new Date(bucket.from).toISOString(),
                to: new Date(bucket.to).toISOString(),
              })),
            }
          : {}),
      };
    },
  );

  app.get(
    "/metrics",
    {
      config: { permission: "stats.read" },
      schema: {
        summary: "The tenant's run metrics in the Prometheus text format (a scrape with an API key)",
        tags: ["stats"],
        response: { 200: { type: "string" }, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const tenantStore = store.forTenant(identityOf(request).tenantId);
      const text =
        (await prometheusMetrics(tenantStore, environment.now())) +
        budgetMetrics(await standings(identityOf(request).tenantId));
      return reply.header("content-type", "text/plain; version=0.0.4; charset=utf-8").send(text);
    },
  );
};
