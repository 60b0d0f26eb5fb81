import { getJson } from "./api-client.js";
import type { StatisticsView } from "./api-types.js";
import { descriptionRow } from "./description-row.js";
import { element, replaceChildren } from "./element.js";
import { formatCost, formatDuration, formatNumber } from "./format.js";
import { type ChartSeries, lineChart } from "./line-chart.js";
import type { View } from "./view-context.js";

/** The ranges offered, each with a bucket size that gives a readable number of points. */
const ranges: readonly {
  readonly label: string;
  readonly minutes: number;
  readonly bucketMinutes: number;
}[] = [
  { label: "the last hour", minutes: 60, bucketMinutes: 1 },
  { label: "the last 6 hours", minutes: 360, bucketMinutes: 10 },
  { label: "the last 24 hours", minutes: 1440, bucketMinutes: 60 },
  { label: "the last 7 days", minutes: 10080, bucketMinutes: 360 },
];

const refreshMilliseconds = 10_000;

/**
 * `/v1/stats` over time: runs per minute, error rate per provider, tokens and cost per agent and the cache-hit
 * ratio, each bucket of the chosen range a point, with the range's totals above.
 */
export const statsView: View = (container, context) => {
  const range = element(
    "select",
    { id: "stats-range" },
    ranges.map((choice, index) => element("option", { value: String(index) }, choice.label)),
  );
  const body = element("div", { id: "stats-body" }, element("p", { class: "muted" }, "Loading…"));
  replaceChildren(
    container,
    element("h1", {}, "Statistics"),
    element(
      "form",
      { class: "filters", onsubmit: (event) => event.preventDefault() },
      element("label", { for: "stats-range" }, "Range"),
      range,
    ),
    body,
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const refresh = async () => {
    clearTimeout(timer);
    const choice = ranges[Number(range.value)] ?? (ranges[0] as (typeof ranges)[number]);
    // Buckets aligned to the bucket size, so that points do not move between refreshes.
    const bucket = choice.bucketMinutes * 60_000;
    const to = Math.ceil(Date.now() / bucket) * bucket;
    const from = to - choice.minutes * 60_000;
    const query = (groupBy: string) =>
      `/v1/stats?${new URLSearchParams({
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        bucketMinutes: String(choice.bucketMinutes),
        groupBy,
      })}`;
    try {
      const [byAgent, byProvider] = await Promise.all([
        getJson<StatisticsView>(query("agent"), context.signal),
        getJson<StatisticsView>(query("provider"), context.signal),
      ]);
      draw(body, byAgent, byProvider, choice.bucketMinutes);
    } catch (error) {
      if (context.signal.aborted) return;
      replaceChildren(
        body,
        element(
          "p",
          { class: "error", role: "alert" },
          `Could not read statistics: ${(error as Error).message}`,
        ),
      );
    }
    if (!context.signal.aborted) timer = setTimeout(refresh, refreshMilliseconds);
  };
  range.addEventListener("change", () => void refresh());
  context.signal.addEventListener("abort", () => clearTimeout(timer));
  void refresh();
};

function draw(
  body: HTMLElement,
  byAgent: StatisticsView,
  byProvider: StatisticsView,
  bucketMinutes: number,
): void {
  const agentSeries = byAgent.series ?? [];
  const providerSeries = byProvider.series ?? [];
  const labels = agentSeries.map((bucket) =>
    bucket.from.slice(bucketMinutes >= 1440 ? 0 : 11, 16).replace("T", " "),
  );
  const agents = Object.keys(byAgent.byAgent);
  const providers = Object.keys(byProvider.byProvider);
  const perGroup = (
    series: typeof agentSeries,
    keys: readonly string[],
    pick: (figures: NonNullable<(typeof agentSeries)[number]["groups"]>[number]) => number | null,
  ): ChartSeries[] =>
    keys.map((key) => ({
      name: key,
      values: series.map((bucket) => {
        const group = bucket.groups?.find((candidate) => candidate.key === key);
        return group === undefined ? null : pick(group);
      }),
    }));
  replaceChildren(
    body,
    element(
      "dl",
      { class: "summary totals" },
      descriptionRow("Runs ended", formatNumber(byAgent.runs)),
      descriptionRow("Runs started per minute", byAgent.requestsPerMinute.toFixed(2)),
      descriptionRow("Tokens", formatNumber(byAgent.tokens.total)),
      descriptionRow("Cost", formatCost(byAgent.costUsd)),
      descriptionRow(
        "Duration (average, p95)",
        `${formatDuration(byAgent.durationMs.average)}, ${formatDuration(byAgent.durationMs.p95)}`,
      ),
      descriptionRow(
        "Cache hit ratio",
        byAgent.cache.hitRatio === null ? "—" : `${(byAgent.cache.hitRatio * 100).toFixed(1)} %`,
      ),
      descriptionRow("Failovers", formatNumber(byAgent.failovers)),
    ),
    element(
      "div",
      { class: "charts" },
      lineChart({
        id: "chart-runs",
        title: "Runs per minute",
        labels,
        series: [
          { name: "started", values: agentSeries.map((bucket) => bucket.requests / bucketMinutes) },
          { name: "ended", values: agentSeries.map((bucket) => bucket.runs / bucketMinutes) },
        ],
        format: (value) => value.toFixed(2),
      }),
      lineChart({
        id: "chart-errors",
        title: "Error rate per provider",
        labels,
        series: providers.map((provider) => ({
          name: provider,
          values: providerSeries.map((bucket) => bucket.errorRateByProvider[provider] ?? null),
        })),
        format: (value) => `${(value * 100).toFixed(0)} %`,
      }),
      lineChart({
        id: "chart-tokens",
        title: "Tokens per agent",
        labels,
        series: perGroup(agentSeries, agents, (group) => group.tokens.total),
        format: (value) => formatNumber(Math.round(value)),
      }),
      lineChart({
        id: "chart-cost",
        title: "Cost per agent (USD)",
        labels,
        series: perGroup(agentSeries, agents, (group) => group.costUsd),
        format: (value) => formatCost(value),
      }),
      lineChart({
        id: "chart-cache",
        title: "Cache-hit ratio",
        labels,
        series: [{ name: "hit ratio", values: agentSeries.map((bucket) => bucket.cache.hitRatio) }],
        format: (value) => `${(value * 100).toFixed(0)} %`,
      }),
    ),
  );
}
