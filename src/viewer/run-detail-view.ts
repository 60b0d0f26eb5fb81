import { ApiError, getJson } from "./api-client.js";
import type { ContractView, RunView, TimelineView, VerificationView } from "./api-types.js";
import { approvalList } from "./approval-controls.js";
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
import { readEventStream } from "./read-event-stream.js";
import { renderReport } from "./render-markdown.js";
import type { ViewContext } from "./view-context.js";

const settled = new Set(["completed", "failed", "interrupted"]);

/**
 * One run: its summary, pending approvals, live events while it runs, its timeline (model and tool calls, turn by
 * turn), its final report, its contract and, on request, its transcript's verification.
 */
export function runDetailView(runId: string) {
  return async (container: HTMLElement, context: ViewContext): Promise<void> => {
    const path = `/v1/runs/${encodeURIComponent(runId)}`;
    const summary = element("section", { "aria-labelledby": "summary-heading" });
    const approvals = element("section", {
      id: "approvals",
      "aria-labelledby": "approvals-heading",
      hidden: true,
    });
    const live = element("ol", { class: "events", id: "live-events" });
    const liveSection = element(
      "section",
      { "aria-labelledby": "live-heading", hidden: true },
      element("h2", { id: "live-heading" }, "Live progress"),
      live,
    );
    const timeline = element("section", { id: "timeline", "aria-labelledby": "timeline-heading" });
    const report = element("section", { id: "report", "aria-labelledby": "report-heading" });
    const contract = element("section", { id: "contract", "aria-labelledby": "contract-heading" });
    const verification = verificationSection(path);
    replaceChildren(
      container,
      element("p", {}, element("a", { href: "#/runs" }, "← All runs")),
      element("h1", {}, "Run ", element("code", {}, runId)),
      summary,
      approvals,
      liveSection,
      timeline,
      report,
      contract,
      verification,
    );

    let run: RunView;
    try {
      run = await getJson<RunView>(path, context.signal);
    } catch (error) {
      replaceChildren(
        summary,
        element(
          "p",
          { class: "error", role: "alert" },
          error instanceof ApiError && error.status === 404
            ? `No run ${runId} in your tenant.`
            : (error as Error).message,
        ),
      );
      return;
    }
    let lastShown = "";
    const show = async (): Promise<void> => {
      const [current, steps] = await Promise.all([
        getJson<RunView>(path, context.signal),
        getJson<TimelineView>(`${path}/timeline`, context.signal).catch(() => null),
      ]);
      run = current;
      drawSummary(summary, run);
      drawApprovals(approvals, run, context, () => void show());
      if (steps !== null) drawTimeline(timeline, steps);
      drawReport(report, run);
      const state = `${run.status}:${run.turns}:${run.chain.entries}`;
      if (lastShown !== "" && state !== lastShown) context.announce(`Run ${run.status.replaceAll("_", " ")}`);
      lastShown = state;
    };
    await show();
    void getJson<ContractView>(`${path}/contract`, context.signal)
      .then((view) => drawContract(contract, view))
      .catch(() =>
        replaceChildren(contract, element("h2", { id: "contract-heading" }, "Contract"), "Not available."),
      );

    if (!settled.has(run.status) || run.lifecycle !== undefined) {
      // Only runs started through the API have an event stream; it replays from the first event, then follows.
      let pending: Promise<void> | null = null;
      let again = false;
      const refresh = () => {
        if (pending !== null) {
          again = true;
          return;
        }
        pending = show()
          .catch(() => undefined)
          .finally(() => {
            pending = null;
            if (again) {
              again = false;
              refresh();
            }
          });
      };
      liveSection.hidden = false;
      void readEventStream(
        `${path}/events`,
        (event) => {
          live.appendChild(
            element(
              "li",
              { "data-event": event.event },
              element("span", { class: "event-type" }, event.event),
              " ",
              eventText(event.data),
            ),
          );
          refresh();
        },
        context.signal,
      ).catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 404) liveSection.hidden = true;
        else live.appendChild(element("li", { class: "error" }, `Event stream: ${(error as Error).message}`));
      });
    }
  };
}

function eventText(data: unknown): string {
  if (typeof data !== "object" || data === null) return "";
  const event = data as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof event.created_at === "string") parts.push(formatTime(event.created_at));
  if (typeof event.tool === "string") parts.push(`${event.tool} ${String(event.status ?? "")}`.trim());
  if (typeof event.provider === "string" && typeof event.model === "string")
    parts.push(`${event.provider}/${event.model}`);
  if (typeof event.outcome === "string") parts.push(event.outcome);
  return parts.join(" · ");
}

function drawSummary(section: HTMLElement, run: RunView): void {
  replaceChildren(
    section,
    element("h2", { id: "summary-heading", class: "visually-hidden" }, "Summary"),
    element(
      "dl",
      { class: "summary" },
      descriptionRow("Agent", run.agent),
      descriptionRow("Status", statusBadge(run.status)),
      descriptionRow("Outcome", run.outcome ?? "—"),
      run.errorCode !== null ? descriptionRow("Error", run.errorCode) : null,
      descriptionRow("Turns", formatNumber(run.turns)),
      descriptionRow(
        "Tokens",
        `${formatNumber(run.tokens.input)} in, ${formatNumber(run.tokens.output)} out`,
      ),
      descriptionRow("Cost", formatCost(run.costUsd)),
      descriptionRow("Duration", formatDuration(runDuration(run))),
      descriptionRow("Started", formatTime(run.createdAt)),
      descriptionRow("Finished", formatTime(run.finishedAt)),
      run.correlationId !== null ? descriptionRow("Correlation id", run.correlationId) : null,
      run.userId ? descriptionRow("Started by", run.userId) : null,
      descriptionRow(
        "Transcript",
        `${run.chain.entries} entries, head ${run.chain.head.slice(0, 16) || "—"}`,
      ),
    ),
  );
}

function drawApprovals(section: HTMLElement, run: RunView, context: ViewContext, decided: () => void): void {
  const pending = run.status === "awaiting_approval" ? (run.pendingApprovals ?? []) : [];
  section.hidden = pending.length === 0;
  if (pending.length === 0) {
    section.replaceChildren();
    return;
  }
  // Redrawn only when the calls waited on change, so that a decision's message stays while the run goes on.
  const key = pending.map((call) => call.callId).join(",");
  if (section.dataset.calls === key) return;
  section.dataset.calls = key;
  replaceChildren(
    section,
    element("h2", { id: "approvals-heading" }, "Waiting for approval"),
    approvalList(run, pending, context, decided),
  );
}

function drawTimeline(section: HTMLElement, timeline: TimelineView): void {
  replaceChildren(
    section,
    element("h2", { id: "timeline-heading" }, "Timeline"),
    timeline.turns.length === 0 ? element("p", { class: "muted" }, "No model or tool calls yet.") : null,
    timeline.turns.map((turn) =>
      element(
        "div",
        { class: "turn", "data-turn": turn.turn },
        element("h3", {}, `Turn ${turn.turn}`),
        turn.modelCalls.length === 0
          ? null
          : element(
              "table",
              { class: "model-calls" },
              element("caption", {}, "Model calls"),
              columnHeads([
                "Target",
                "Attempt",
                "Status",
                "Latency",
                "Tokens in",
                "Tokens out",
                "Cost",
                "Notes",
              ]),
              element(
                "tbody",
                {},
                turn.modelCalls.map((call) =>
                  element(
                    "tr",
                    { class: call.status === "failed" ? "failed" : "" },
                    element("td", {}, call.target),
                    element("td", { class: "number" }, String(call.attempt)),
                    element("td", {}, statusBadge(call.status)),
                    element("td", { class: "number" }, formatDuration(call.latencyMs)),
                    element("td", { class: "number" }, formatNumber(call.tokens.input)),
                    element("td", { class: "number" }, formatNumber(call.tokens.output)),
                    element("td", { class: "number" }, formatCost(call.costUsd)),
                    element(
                      "td",
                      {},
                      call.retry ? element("span", { class: "badge retry" }, "retry") : null,
                      call.failover ? element("span", { class: "badge failover" }, "failover") : null,
                      call.errorCode !== null ? ` ${call.errorCode}` : null,
                    ),
                  ),
                ),
              ),
            ),
        turn.toolCalls.length === 0
          ? null
          : element(
              "table",
              { class: "tool-calls" },
              element("caption", {}, "Tool calls"),
              columnHeads(["Tool", "Call", "Arguments", "Status", "Duration", "Result"]),
              element(
                "tbody",
                {},
                turn.toolCalls.map((call) =>
                  element(
                    "tr",
                    { "data-call-id": call.callId },
                    element("td", {}, call.tool),
                    element("td", {}, element("code", {}, call.callId)),
                    element("td", {}, jsonBlock(call.arguments)),
                    element(
                      "td",
                      {},
                      statusBadge(call.status),
                      call.cacheHit === true ? element("span", { class: "badge" }, "cached") : null,
                      call.errorCode !== null ? ` ${call.errorCode}` : null,
                    ),
                    element("td", { class: "number" }, formatDuration(call.durationMs)),
                    element(
                      "td",
                      {},
                      call.resultPreview === null
                        ? "—"
                        : element("code", { class: "preview" }, call.resultPreview),
                    ),
                  ),
                ),
              ),
            ),
      ),
    ),
  );
}

function drawReport(section: HTMLElement, run: RunView): void {
  const body = element("div", { class: "report" });
  if (run.finalReport === null || run.finalReport === undefined) body.textContent = "No report yet.";
  else body.appendChild(renderReport(run.finalReport));
  replaceChildren(section, element("h2", { id: "report-heading" }, "Final report"), body);
}

function drawContract(section: HTMLElement, view: ContractView): void {
  const contract = view.contract;
  const limitNames = [
    "max_inferences",
    "max_tokens_consumed",
    "max_tool_calls_per_turn",
    "max_retries",
    "max_format_retries",
    "step_timeout_ms",
    "total_timeout_ms",
    "tool_timeout_ms",
  ];
  const tools = Array.isArray(contract.tool_manifest)
    ? (contract.tool_manifest as { name?: unknown; description?: unknown }[])
    : [];
  const output = (contract.output ?? {}) as { format?: unknown };
  replaceChildren(
    section,
    element("h2", { id: "contract-heading" }, "Contract"),
    element(
      "dl",
      { class: "summary" },
      descriptionRow("Hash", element("code", { class: "hash" }, view.contractHash)),
    ),
    element("h3", {}, "Limits"),
    element(
      "dl",
      { class: "summary" },
      limitNames
        .filter((name) => name in contract)
        .map((name) => descriptionRow(name, String(contract[name] ?? "none"))),
    ),
    element("h3", {}, "Policy"),
    element(
      "dl",
      { class: "summary" },
      descriptionRow("Tool policy", String(contract.tool_policy ?? "—")),
      descriptionRow(
        "Allowed tools",
        contract.allowed_tools === null ? "all in the manifest" : JSON.stringify(contract.allowed_tools),
      ),
      descriptionRow("Strict mode", String(contract.strict_mode ?? "—")),
      descriptionRow("Output format", String(output.format ?? "—")),
    ),
    element("h3", {}, `Tools (${tools.length})`),
    element(
      "ul",
      { class: "tools" },
      tools.map((tool) =>
        element(
          "li",
          {},
          element("code", {}, String(tool.name)),
          typeof tool.description === "string" ? ` — ${tool.description}` : null,
        ),
      ),
    ),
    element("details", {}, element("summary", {}, "The whole contract (JSON)"), jsonBlock(contract)),
  );
}

function verificationSection(path: string): HTMLElement {
  const result = element("div", { id: "verification-result", role: "status", "aria-live": "polite" });
  const button = element("button", { type: "button", id: "verify" }, "Verify the transcript now");
  button.addEventListener("click", async () => {
    button.disabled = true;
    result.textContent = "Verifying…";
    try {
      const report = await getJson<VerificationView>(`${path}/verification`);
      const bad = report.firstBadEntry;
      replaceChildren(
        result,
        report.ok
          ? element(
              "p",
              { class: "verified ok" },
              `Verified: ${report.entries} entries, the chain is intact.`,
            )
          : element(
              "p",
              { class: "verified failed" },
              element("strong", {}, "Verification failed"),
              bad === null
                ? ""
                : bad.seq === null
                  ? `: ${bad.reason} (${bad.detail})`
                  : `: entry ${bad.seq}${bad.stepId !== null ? ` (${bad.stepId})` : ""} — ${bad.reason}: ${bad.detail}`,
              `. ${report.entries} entries before it verified.`,
            ),
      );
    } catch (error) {
      result.textContent = `Could not verify: ${(error as Error).message}`;
    } finally {
      button.disabled = false;
    }
  });
  return element(
    "section",
    { id: "verification", "aria-labelledby": "verification-heading" },
    element("h2", { id: "verification-heading" }, "Transcript verification"),
    element(
      "p",
      { class: "muted" },
      "Recomputes the hash chain of the stored transcript, its payloads and the records it binds.",
    ),
    button,
    result,
  );
}
