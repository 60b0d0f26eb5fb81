import { getJson } from "./api-client.js";
import type { RunList, RunView } from "./api-types.js";
import { columnHeads } from "./column-heads.js";
import { element, replaceChildren } from "./element.js";
import { formatCost, formatDuration, formatNumber, formatTime, runDuration, statusBadge } from "./format.js";
import type { View } from "./view-context.js";

/** How often the list is read again while it is shown: it follows new runs and status changes. */
export const runsRefreshMilliseconds = 2000;

const statuses = ["", "queued", "running", "awaiting_approval", "completed", "failed", "interrupted"];
const periods: readonly (readonly [string, string])[] = [
  ["", "any time"],
  ["3600000", "the last hour"],
  ["86400000", "the last 24 hours"],
  ["604800000", "the last 7 days"],
];

/**
 * The tenant's runs, newest first, read again every 2 seconds while shown: agent, status, outcome, turns,
 * tokens, cost, duration and start, filtered by status and agent (by the API) and by start time (here).
 */
export const runsView: View = (container, context) => {
  const status = element(
    "select",
    { id: "filter-status", name: "status" },
    statuses.map((value) =>
      element("option", { value }, value === "" ? "any status" : value.replaceAll("_", " ")),
    ),
  );
  const agent = element("input", {
    id: "filter-agent",
    name: "agent",
    type: "search",
    placeholder: "any agent",
  });
  const period = element(
    "select",
    { id: "filter-period", name: "period" },
    periods.map(([value, label]) => element("option", { value }, label)),
  );
  const summary = element("p", { class: "muted", id: "runs-summary" }, "Loading runs…");
  const body = element("tbody");
  const table = element(
    "table",
    { class: "runs", "aria-describedby": "runs-summary" },
    element("caption", { class: "visually-hidden" }, "Runs, newest first"),
    columnHeads(["Run", "Agent", "Status", "Outcome", "Turns", "Tokens", "Cost", "Duration", "Started"]),
    body,
  );
  const form = element(
    "form",
    {
      class: "filters",
      role: "search",
      "aria-label": "Filter runs",
      onsubmit: (event) => event.preventDefault(),
    },
    element("label", { for: "filter-status" }, "Status"),
    status,
    element("label", { for: "filter-agent" }, "Agent"),
    agent,
    element("label", { for: "filter-period" }, "Started in"),
    period,
  );
  replaceChildren(
    container,
    element("h1", {}, "Runs"),
    form,
    summary,
    element("div", { class: "scroll" }, table),
  );

  let shown: string | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const refresh = async () => {
    clearTimeout(timer);
    const query = new URLSearchParams({ limit: "200" });
    if (status.value !== "") query.set("status", status.value);
    if (agent.value.trim() !== "") query.set("agent", agent.value.trim());
    try {
      const list = await getJson<RunList>(`/v1/runs?${query}`, context.signal);
      const since = period.value === "" ? null : Date.now() - Number(period.value);
      const runs = list.runs.filter((run) => since === null || Date.parse(run.createdAt) >= since);
      const fingerprint = runs.map((run) => `${run.runId}:${run.status}:${run.turns}`).join(",");
      if (fingerprint !== shown) {
        if (shown !== null) context.announce(`Runs updated: ${runs.length} shown`);
        shown = fingerprint;
        replaceChildren(body, runs.map(runRow));
        if (runs.length === 0) {
          body.appendChild(
            element("tr", {}, element("td", { colspan: 9, class: "muted" }, "No runs match.")),
          );
        }
      }
      summary.textContent = `${runs.length} run${runs.length === 1 ? "" : "s"}; updated ${new Date().toLocaleTimeString("en-GB")}`;
    } catch (error) {
      if (context.signal.aborted) return;
      summary.textContent = `Could not read the runs: ${(error as Error).message}`;
    }
    if (!context.signal.aborted) timer = setTimeout(refresh, runsRefreshMilliseconds);
  };
  for (const control of [status, period]) control.addEventListener("change", () => void refresh());
  agent.addEventListener("input", () => void refresh());
  context.signal.addEventListener("abort", () => clearTimeout(timer));
  void refresh();
};

function runRow(run: RunView): HTMLTableRowElement {
  return element(
    "tr",
    { "data-run-id": run.runId },
    element("td", {}, element("a", { href: `#/runs/${encodeURIComponent(run.runId)}` }, run.runId)),
    element("td", {}, run.agent),
    element("td", {}, statusBadge(run.status)),
    element("td", {}, run.outcome ?? "—"),
    element("td", { class: "number" }, formatNumber(run.turns)),
    element("td", { class: "number" }, formatNumber(run.tokens.input + run.tokens.output)),
    element("td", { class: "number" }, formatCost(run.costUsd)),
    element("td", { class: "number" }, formatDuration(runDuration(run))),
    element("td", {}, element("time", { datetime: run.createdAt }, formatTime(run.createdAt))),
  );
}
