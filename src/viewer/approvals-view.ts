import { getJson } from "./api-client.js";
import type { RunList, RunView } from "./api-types.js";
import { approvalList } from "./approval-controls.js";
import { element, replaceChildren } from "./element.js";
import { formatTime } from "./format.js";
import type { View } from "./view-context.js";

const refreshMilliseconds = 3000;

/** Every run of the tenant that waits for a person: its pending calls with their arguments, and the buttons. */
export const approvalsView: View = (container, context) => {
  const list = element("div", { id: "approval-runs" }, element("p", { class: "muted" }, "Loading…"));
  replaceChildren(container, element("h1", {}, "Approvals"), list);
  let shown: string | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const refresh = async () => {
    clearTimeout(timer);
    try {
      const waiting = await getJson<RunList>("/v1/runs?status=awaiting_approval&limit=100", context.signal);
      const runs = await Promise.all(
        waiting.runs.map((run) =>
          getJson<RunView>(`/v1/runs/${encodeURIComponent(run.runId)}`, context.signal),
        ),
      );
      const key = runs
        .map((run) => `${run.runId}:${(run.pendingApprovals ?? []).map((call) => call.callId)}`)
        .join(";");
      if (key !== shown) {
        if (shown !== null)
          context.announce(`${runs.length} run${runs.length === 1 ? "" : "s"} waiting for approval`);
        shown = key;
        replaceChildren(
          list,
          runs.length === 0 ? element("p", { class: "muted" }, "No run waits for an approval.") : null,
          runs.map((run) =>
            element(
              "section",
              { class: "approval-run", "data-run-id": run.runId, "aria-label": `Run ${run.runId}` },
              element(
                "h2",
                {},
                element("a", { href: `#/runs/${encodeURIComponent(run.runId)}` }, run.runId),
                element("span", { class: "muted" }, ` ${run.agent}, started ${formatTime(run.createdAt)}`),
              ),
              approvalList(run, run.pendingApprovals ?? [], context, () => void refresh()),
            ),
          ),
        );
      }
    } catch (error) {
      if (context.signal.aborted) return;
      replaceChildren(
        list,
        element(
          "p",
          { class: "error", role: "alert" },
          `Could not read approvals: ${(error as Error).message}`,
        ),
      );
    }
    if (!context.signal.aborted) timer = setTimeout(refresh, refreshMilliseconds);
  };
  context.signal.addEventListener("abort", () => clearTimeout(timer));
  void refresh();
};
