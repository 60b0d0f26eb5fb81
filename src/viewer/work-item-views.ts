import { ApiError, getJson } from "./api-client.js";
import type { WorkItemRunList, WorkItemRunView } from "./api-types.js";
import { element, replaceChildren } from "./element.js";
import { formatTime, jsonBlock, statusBadge } from "./format.js";
import type { View, ViewContext } from "./view-context.js";

const refreshMilliseconds = 3000;

/** The tenant's work item runs with a receipt, newest first. */
export const workItemsView: View = (container, context) => {
  const body = element("tbody");
  const summary = element("p", { class: "muted" }, "Loading…");
  replaceChildren(
    container,
    element("h1", {}, "Work items"),
    summary,
    element(
      "div",
      { class: "scroll" },
      element(
        "table",
        { class: "work-items" },
        element("caption", { class: "visually-hidden" }, "Work item runs, newest first"),
        element(
          "thead",
          {},
          element(
            "tr",
            {},
            ["Run", "Work item", "Repository", "Status", "Files", "Tests", "Started"].map((name) =>
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
      const list = await getJson<WorkItemRunList>("/v1/work-items/runs?limit=100", context.signal);
      replaceChildren(
        body,
        list.workItemRuns.length === 0
          ? element("tr", {}, element("td", { colspan: 7, class: "muted" }, "No work item runs."))
          : list.workItemRuns.map((run) =>
              element(
                "tr",
                { "data-run-id": run.runId },
                element(
                  "td",
                  {},
                  element("a", { href: `#/work-items/${encodeURIComponent(run.runId)}` }, run.runId),
                ),
                element("td", {}, run.workItemId),
                element("td", {}, run.repository ?? "—"),
                element("td", {}, statusBadge(run.status)),
                element("td", { class: "number" }, String(run.receipt?.files.length ?? 0)),
                element("td", {}, testSummary(run)),
                element("td", {}, formatTime(run.createdAt)),
              ),
            ),
      );
      summary.textContent = `${list.workItemRuns.length} work item run${list.workItemRuns.length === 1 ? "" : "s"}`;
    } catch (error) {
      if (context.signal.aborted) return;
      summary.textContent = `Could not read the work items: ${(error as Error).message}`;
    }
    if (!context.signal.aborted) timer = setTimeout(refresh, refreshMilliseconds);
  };
  context.signal.addEventListener("abort", () => clearTimeout(timer));
  void refresh();
};

function testSummary(run: WorkItemRunView): string {
  const test = run.receipt?.test;
  if (test === null || test === undefined || test.command === null) return "—";
  return `${test.passed ?? "?"} passed, ${test.failed ?? "?"} failed`;
}

/** A unified diff with each added and removed line marked (by a class and by its own + or -). */
function diffBlock(diff: string): HTMLElement {
  return element(
    "pre",
    { class: "diff" },
    element(
      "code",
      {},
      diff.split("\n").map((line) => {
        const kind =
          line.startsWith("+++") || line.startsWith("---")
            ? "file"
            : line.startsWith("+")
              ? "added"
              : line.startsWith("-")
                ? "removed"
                : line.startsWith("@@")
                  ? "hunk"
                  : "context";
        return element("span", { class: `diff-${kind}` }, `${line}\n`);
      }),
    ),
  );
}

/** One work item run: its receipt, the files it touched with their diffs, and the test output. */
export function workItemDetailView(runId: string) {
  return async (container: HTMLElement, context: ViewContext): Promise<void> => {
    const content = element("div", {}, element("p", { class: "muted" }, "Loading…"));
    replaceChildren(
      container,
      element("p", {}, element("a", { href: "#/work-items" }, "← All work items")),
      element("h1", {}, "Work item run ", element("code", {}, runId)),
      content,
    );
    let run: WorkItemRunView;
    try {
      run = await getJson<WorkItemRunView>(
        `/v1/work-items/runs/${encodeURIComponent(runId)}`,
        context.signal,
      );
    } catch (error) {
      replaceChildren(
        content,
        element(
          "p",
          { class: "error", role: "alert" },
          error instanceof ApiError && error.status === 404
            ? `No work item run ${runId} in your tenant.`
            : (error as Error).message,
        ),
      );
      return;
    }
    const receipt = run.receipt;
    replaceChildren(
      content,
      element(
        "dl",
        { class: "summary" },
        element("dt", {}, "Work item"),
        element("dd", {}, run.workItemId),
        element("dt", {}, "Status"),
        element("dd", {}, statusBadge(run.status)),
        element("dt", {}, "Agent run"),
        element("dd", {}, element("a", { href: `#/runs/${encodeURIComponent(run.runId)}` }, run.runId)),
        element("dt", {}, "Started"),
        element("dd", {}, formatTime(run.createdAt)),
        element("dt", {}, "Finished"),
        element("dd", {}, formatTime(run.finishedAt)),
      ),
      receipt === null
        ? element("p", { class: "muted" }, "No receipt yet: the item has not ended.")
        : [
            element("h2", {}, "Receipt"),
            element(
              "dl",
              { class: "summary receipt" },
              element("dt", {}, "Receipt"),
              element("dd", {}, element("code", {}, receipt.receiptId)),
              element("dt", {}, "Receipt hash"),
              element("dd", {}, element("code", { class: "hash" }, receipt.receiptHash)),
              element("dt", {}, "Commit"),
              element("dd", {}, receipt.commit === null ? "—" : element("code", {}, receipt.commit)),
              element("dt", {}, "Contract hash"),
              element("dd", {}, element("code", { class: "hash" }, receipt.contractHash ?? "—")),
              element("dt", {}, "Transcript head"),
              element("dd", {}, element("code", { class: "hash" }, receipt.transcriptHead ?? "—")),
              receipt.denialReason !== null
                ? [element("dt", {}, "Denied"), element("dd", {}, receipt.denialReason)]
                : null,
            ),
            element("h2", {}, `Files touched (${receipt.files.length})`),
            receipt.files.length === 0
              ? element("p", { class: "muted" }, "None.")
              : receipt.files.map((file) =>
                  element(
                    "section",
                    { class: "file", "data-path": file.path },
                    element("h3", {}, element("code", {}, file.path), ` — ${file.change}`),
                    file.diff === null
                      ? element("p", { class: "muted" }, "No diff recorded.")
                      : diffBlock(file.diff),
                  ),
                ),
            element("h2", {}, "Tests"),
            receipt.test === null || receipt.test.command === null
              ? element("p", { class: "muted" }, "No test command.")
              : [
                  element(
                    "p",
                    {},
                    element("code", {}, receipt.test.command),
                    ` — ${receipt.test.passed ?? "?"} passed, ${receipt.test.failed ?? "?"} failed`,
                  ),
                  (receipt.test.output ?? null) === null
                    ? element("p", { class: "muted" }, "The output was not recorded.")
                    : element(
                        "pre",
                        { class: "test-output" },
                        element("code", {}, receipt.test.output ?? ""),
                      ),
                ],
            element(
              "details",
              {},
              element("summary", {}, "Metrics and the work item (JSON)"),
              jsonBlock({ metrics: receipt.metrics, item: run.item }),
            ),
          ],
    );
  };
}
