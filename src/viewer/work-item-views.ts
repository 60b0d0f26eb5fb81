import type { WorkItemRunList, WorkItemRunView } from "./api-types.js";
import { descriptionRow } from "./description-row.js";
import { element, replaceChildren } from "./element.js";
import { formatTime, jsonBlock, statusBadge } from "./format.js";
import { refreshedRunList } from "./refreshed-run-list.js";
import { runDetailPage } from "./run-detail-page.js";

/** The tenant's work item runs with a receipt, newest first. */
export const workItemsView = refreshedRunList<WorkItemRunList, WorkItemRunView>({
  heading: "Work items",
  tableClass: "work-items",
  caption: "Work item runs, newest first",
  columns: ["Run", "Work item", "Repository", "Status", "Files", "Tests", "Started"],
  path: "/v1/work-items/runs?limit=100",
  runsOf: (list) => list.workItemRuns,
  noun: "work item run",
  none: "No work item runs.",
  whatFailed: "the work items",
  href: (runId) => `#/work-items/${encodeURIComponent(runId)}`,
  cells: (run) => [
    element("td", {}, run.workItemId),
    element("td", {}, run.repository ?? "—"),
    element("td", {}, statusBadge(run.status)),
    element("td", { class: "number" }, String(run.receipt?.files.length ?? 0)),
    element("td", {}, testSummary(run)),
    element("td", {}, formatTime(run.createdAt)),
  ],
});

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
  return runDetailPage<WorkItemRunView>({
    runId,
    back: { href: "#/work-items", text: "← All work items" },
    heading: "Work item run ",
    path: `/v1/work-items/runs/${encodeURIComponent(runId)}`,
    notFound: `No work item run ${runId} in your tenant.`,
    draw: drawWorkItemRun,
  });
}

function drawWorkItemRun(content: HTMLElement, run: WorkItemRunView): void {
  const receipt = run.receipt;
  replaceChildren(
    content,
    element(
      "dl",
      { class: "summary" },
      descriptionRow("Work item", run.workItemId),
      descriptionRow("Status", statusBadge(run.status)),
      descriptionRow(
        "Agent run",
        element("a", { href: `#/runs/${encodeURIComponent(run.runId)}` }, run.runId),
      ),
      descriptionRow("Started", formatTime(run.createdAt)),
      descriptionRow("Finished", formatTime(run.finishedAt)),
    ),
    receipt === null
      ? element("p", { class: "muted" }, "No receipt yet: the item has not ended.")
      : [
          element("h2", {}, "Receipt"),
          element(
            "dl",
            { class: "summary receipt" },
            descriptionRow("Receipt", element("code", {}, receipt.receiptId)),
            descriptionRow("Receipt hash", element("code", { class: "hash" }, receipt.receiptHash)),
            descriptionRow("Commit", receipt.commit === null ? "—" : element("code", {}, receipt.commit)),
            descriptionRow("Contract hash", element("code", { class: "hash" }, receipt.contractHash ?? "—")),
            descriptionRow(
              "Transcript head",
              element("code", { class: "hash" }, receipt.transcriptHead ?? "—"),
            ),
            receipt.denialReason !== null ? descriptionRow("Denied", receipt.denialReason) : null,
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
                  : element("pre", { class: "test-output" }, element("code", {}, receipt.test.output ?? "")),
              ],
          element(
            "details",
            {},
            element("summary", {}, "Metrics and the work item (JSON)"),
            jsonBlock({ metrics: receipt.metrics, item: run.item }),
          ),
        ],
  );
}
