import { ApiError, getJson } from "./api-client.js";
import type { WorkflowRunList, WorkflowRunView } from "./api-types.js";
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
import { renderReport } from "./render-markdown.js";
import type { View, ViewContext } from "./view-context.js";
import { workflowGraph } from "./workflow-graph.js";

const refreshMilliseconds = 3000;

/** The tenant's workflow runs, newest first, read again every 3 seconds. */
export const workflowsView: View = (container, context) => {
  const body = element("tbody");
  const summary = element("p", { class: "muted" }, "Loading…");
  replaceChildren(
    container,
    element("h1", {}, "Workflow runs"),
    summary,
    element(
      "div",
      { class: "scroll" },
      element(
        "table",
        { class: "workflows" },
        element("caption", { class: "visually-hidden" }, "Workflow runs, newest first"),
        element(
          "thead",
          {},
          element(
            "tr",
            {},
            ["Run", "Workflow", "Status", "Steps", "Tokens", "Cost", "Duration", "Started"].map((name) =>
              element("th", { scope: "col" }, name),
            ),
          ),
        ),
        body,
      ),
    ),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const refresh = async () => {
    try {
      const list = await getJson<WorkflowRunList>("/v1/workflows/runs?limit=100", context.signal);
      replaceChildren(
        body,
        list.workflowRuns.length === 0
          ? element("tr", {}, element("td", { colspan: 8, class: "muted" }, "No workflow runs."))
          : list.workflowRuns.map((run) =>
              element(
                "tr",
                { "data-run-id": run.runId },
                element(
                  "td",
                  {},
                  element("a", { href: `#/workflows/${encodeURIComponent(run.runId)}` }, run.runId),
                ),
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
              ),
            ),
      );
      summary.textContent = `${list.workflowRuns.length} workflow run${list.workflowRuns.length === 1 ? "" : "s"}`;
    } catch (error) {
      if (context.signal.aborted) return;
      summary.textContent = `Could not read the workflow runs: ${(error as Error).message}`;
    }
    if (!context.signal.aborted) timer = setTimeout(refresh, refreshMilliseconds);
  };
  context.signal.addEventListener("abort", () => clearTimeout(timer));
  void refresh();
};

/** One workflow run: its steps as a graph (each linked to its run) and as a table, its errors and its output. */
export function workflowDetailView(runId: string) {
  return async (container: HTMLElement, context: ViewContext): Promise<void> => {
    const content = element("div", {}, element("p", { class: "muted" }, "Loading…"));
    replaceChildren(
      container,
      element("p", {}, element("a", { href: "#/workflows" }, "← All workflow runs")),
      element("h1", {}, "Workflow run ", element("code", {}, runId)),
      content,
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    const refresh = async () => {
      let run: WorkflowRunView;
      try {
        run = await getJson<WorkflowRunView>(
          `/v1/workflows/runs/${encodeURIComponent(runId)}`,
          context.signal,
        );
      } catch (error) {
        if (context.signal.aborted) return;
        replaceChildren(
          content,
          element(
            "p",
            { class: "error", role: "alert" },
            error instanceof ApiError && error.status === 404
              ? `No workflow run ${runId} in your tenant.`
              : (error as Error).message,
          ),
        );
        return;
      }
      drawWorkflow(content, run);
      const running = ![
        "completed",
        "failed",
        "completed_with_errors",
        "rolled_back",
        "rollback_failed",
        "interrupted",
      ].includes(run.status);
      if (running && !context.signal.aborted) timer = setTimeout(refresh, refreshMilliseconds);
    };
    context.signal.addEventListener("abort", () => clearTimeout(timer));
    await refresh();
  };
}

function drawWorkflow(content: HTMLElement, run: WorkflowRunView): void {
  replaceChildren(
    content,
    element(
      "dl",
      { class: "summary" },
      element("dt", {}, "Workflow"),
      element("dd", {}, run.workflowId),
      element("dt", {}, "Status"),
      element("dd", {}, statusBadge(run.status)),
      element("dt", {}, "Turns"),
      element("dd", {}, formatNumber(run.accounting.turns)),
      element("dt", {}, "Tokens"),
      element(
        "dd",
        {},
        `${formatNumber(run.accounting.tokens.input)} in, ${formatNumber(run.accounting.tokens.output)} out`,
      ),
      element("dt", {}, "Cost"),
      element("dd", {}, formatCost(run.accounting.costUsd)),
      element("dt", {}, "Started"),
      element("dd", {}, formatTime(run.createdAt)),
      element("dt", {}, "Finished"),
      element("dd", {}, formatTime(run.finishedAt)),
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
      element(
        "thead",
        {},
        element(
          "tr",
          {},
          ["Step", "Kind", "Agent or tool", "Depends on", "Status", "Outcome", "Duration", "Run"].map(
            (name) => element("th", { scope: "col" }, name),
          ),
        ),
      ),
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
