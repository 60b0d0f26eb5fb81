import type { WorkflowRunList, WorkflowRunView } from "./api-types.js";
import { columnHeads } from "./column-heads.js";
import { descriptionRow } from "./description-row.js";
import { element, replaceChildren } from "./element.js";
import {
  formatCost,
  formatDuration,
  formatNumber,
  formatTime,
  jsonBlock,
  runDuration,
  statusBadge,
} from "./format.js";
import { refreshedRunList } from "./refreshed-run-list.js";
import { renderReport } from "./render-markdown.js";
import { runDetailPage } from "./run-detail-page.js";
import { workflowGraph } from "./workflow-graph.js";

/** The tenant's workflow runs, newest first, read again every 3 seconds. */
export const workflowsView = refreshedRunList<WorkflowRunList, WorkflowRunView>({
  heading: "Workflow runs",
  tableClass: "workflows",
  caption: "Workflow runs, newest first",
  columns: ["Run", "Workflow", "Status", "Steps", "Tokens", "Cost", "Duration", "Started"],
  path: "/v1/workflows/runs?limit=100",
  runsOf: (list) => list.workflowRuns,
  noun: "workflow run",
  none: "No workflow runs.",
  whatFailed: "the workflow runs",
  href: (runId) => `#/workflows/${encodeURIComponent(runId)}`,
  cells: (run) => [
    element("td", {}, run.workflowId),
    element("td", {}, statusBadge(run.status)),
    element(
      "td",
      { class: "number" },
      `${run.steps.filter((step) => step.status === "completed").length} of ${run.steps.length} done`,
    ),
    element(
      "td",
      { class: "number" },
      formatNumber(run.accounting.tokens.input + run.accounting.tokens.output),
    ),
    element("td", { class: "number" }, formatCost(run.accounting.costUsd)),
    element("td", { class: "number" }, formatDuration(runDuration(run))),
    element("td", {}, formatTime(run.createdAt)),
  ],
});

/** The statuses after which a workflow run changes no more: its page stops reading it again. */
const settledStatuses = [
  "completed",
  "failed",
  "completed_with_errors",
  "rolled_back",
  "rollback_failed",
  "interrupted",
];

/** One workflow run: its steps as a graph (each linked to its run) and as a table, its errors and its output. */
export function workflowDetailView(runId: string) {
  return runDetailPage<WorkflowRunView>({
    runId,
    back: { href: "#/workflows", text: "← All workflow runs" },
    heading: "Workflow run ",
    path: `/v1/workflows/runs/${encodeURIComponent(runId)}`,
    notFound: `No workflow run ${runId} in your tenant.`,
    draw: drawWorkflow,
    settled: (run) => settledStatuses.includes(run.status),
  });
}

function drawWorkflow(content: HTMLElement, run: WorkflowRunView): void {
  replaceChildren(
    content,
    element(
      "dl",
      { class: "summary" },
      descriptionRow("Workflow", run.workflowId),
      descriptionRow("Status", statusBadge(run.status)),
      descriptionRow("Turns", formatNumber(run.accounting.turns)),
      descriptionRow(
        "Tokens",
        `${formatNumber(run.accounting.tokens.input)} in, ${formatNumber(run.accounting.tokens.output)} out`,
      ),
      descriptionRow("Cost", formatCost(run.accounting.costUsd)),
      descriptionRow("Started", formatTime(run.createdAt)),
      descriptionRow("Finished", formatTime(run.finishedAt)),
    ),
    element("h2", {}, "Steps"),
    element(
      "div",
      { class: "scroll" },
      workflowGraph(run.steps, `The steps of ${run.workflowId} and their order`),
    ),
    element(
      "table",
      { class: "steps" },
      element("caption", {}, "Steps, in the order of the workflow file"),
      columnHeads(["Step", "Kind", "Agent or tool", "Depends on", "Status", "Outcome", "Duration", "Run"]),
      element(
        "tbody",
        {},
        run.steps.map((step) =>
          element(
            "tr",
            { "data-step-id": step.id },
            element("th", { scope: "row" }, step.id),
            element("td", {}, step.kind ?? "—"),
            element("td", {}, step.agent ?? step.tool ?? "—"),
            element("td", {}, (step.dependsOn ?? []).join(", ") || "—"),
            element("td", {}, statusBadge(step.status)),
            element("td", {}, step.outcome ?? "—"),
            element("td", { class: "number" }, formatDuration(step.durationMs)),
            element(
              "td",
              {},
              step.runId === null
                ? "—"
                : element("a", { href: `#/runs/${encodeURIComponent(step.runId)}` }, step.runId),
            ),
          ),
        ),
      ),
    ),
    run.errors.length === 0
      ? null
      : [
          element("h2", {}, "Errors"),
          element(
            "ul",
            {},
            run.errors.map((error) =>
              element(
                "li",
                {},
                `${error.stepId ?? "workflow"} (${error.phase}): ${error.code} — ${error.message}`,
              ),
            ),
          ),
        ],
    element("h2", {}, "Output"),
    run.output === null || run.output === undefined
      ? element("p", { class: "muted" }, "No output yet.")
      : element("div", { class: "report" }, renderReport(run.output)),
    element("details", {}, element("summary", {}, "Input (JSON)"), jsonBlock(run.input)),
  );
}
