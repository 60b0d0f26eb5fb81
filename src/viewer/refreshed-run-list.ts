import { getJson } from "./api-client.js";
import { columnHeads } from "./column-heads.js";
import { type Child, element, replaceChildren } from "./element.js";
import type { View } from "./view-context.js";

/** How often a run list is read again while it is shown: it follows new runs and status changes. */
const refreshMilliseconds = 3000;

export interface RunListOptions<List, Run extends { readonly runId: string }> {
  /** The page's heading, e.g. "Workflow runs". */
  readonly heading: string;
  /** The table's class (its column widths in viewer.css). */
  readonly tableClass: string;
  /** The table's caption, for screen readers. */
  readonly caption: string;
  /** The column headings, the first being the run (a link to its page). */
  readonly columns: readonly string[];
  /** The API path the list is read from. */
  readonly path: string;
  readonly runsOf: (list: List) => readonly Run[];
  /** One run in words, for the count above the table: "workflow run" (an "s" is added for more than one). */
  readonly noun: string;
  /** The row shown when there are no runs. */
  readonly none: string;
  /** What could not be read, in "Could not read the workflow runs: …". */
  readonly whatFailed: string;
  /** The run's page, in the viewer's hash routes. */
  readonly href: (runId: string) => string;
  /** The cells after the run's link. */
  readonly cells: (run: Run) => Child[];
}

/**
 * A list page of the tenant's runs of one kind (workflow runs, work item runs), newest first, read again every 3
 * seconds while shown. The kinds differ only in their columns and API path, so the page, its refresh and its error
 * handling are written once here.
 */
export function refreshedRunList<List, Run extends { readonly runId: string }>(
  options: RunListOptions<List, Run>,
): View {
  return (container, context) => {
    const body = element("tbody");
    const summary = element("p", { class: "muted" }, "Loading…");
    replaceChildren(
      container,
      element("h1", {}, options.heading),
      summary,
      element(
        "div",
        { class: "scroll" },
        element(
          "table",
          { class: options.tableClass },
          element("caption", { class: "visually-hidden" }, options.caption),
          columnHeads(options.columns),
          body,
        ),
      ),
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    const refresh = async () => {
      try {
        const runs = options.runsOf(await getJson<List>(options.path, context.signal));
        replaceChildren(
          body,
          runs.length === 0
            ? element(
                "tr",
                {},
                element("td", { colspan: options.columns.length, class: "muted" }, options.none),
              )
            : runs.map((run) =>
                element(
                  "tr",
                  { "data-run-id": run.runId },
                  element("td", {}, element("a", { href: options.href(run.runId) }, run.runId)),
                  options.cells(run),
                ),
              ),
        );
        summary.textContent = `${runs.length} ${options.noun}${runs.length === 1 ? "" : "s"}`;
      } catch (error) {
        if (context.signal.aborted) return;
        summary.textContent = `Could not read ${options.whatFailed}: ${(error as Error).message}`;
      }
      if (!context.signal.aborted) timer = setTimeout(refresh, refreshMilliseconds);
    };
    context.signal.addEventListener("abort", () => clearTimeout(timer));
    void refresh();
  };
}
