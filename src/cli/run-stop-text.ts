import type { AIAgentResult } from "../session/agent-result.js";
import { pendingApprovalText } from "./pending-approval-text.js";
import { tenantFlag } from "./tenant-flag.js";

/** How many lines of a tool server's stderr a stop message shows (the error's details keep the whole tail). */
const stderrTailLines = 20;

/**
 * What `charter run` and `charter resume` print on stderr when a run ends in anything but a plain success: the
 * outcome and the reason (each word once: `INTERRUPTED: the run was interrupted`, not `INTERRUPTED: INTERRUPTED`),
 * the run id, and the commands that continue or inspect it. A run stored in the run store can be inspected with
 * `charter runs show`; one that was interrupted or waits for approvals can be continued with `charter resume`.
 * A run that failed before it started (nothing stored) names what to fix instead, with the tail of a tool server's
 * stderr when one would not start. Empty for a success.
 */
export function runStopText(result: AIAgentResult, options: { readonly tenantId?: string } = {}): string {
  if (result.success || result.error === null) return "";
  const { error } = result;
  // A tenant's run is found with its --tenant only: the commands name it.
  const runId = `${result.runId}${tenantFlag(options.tenantId ?? null)}`;
  const code = error.code === result.outcome ? "" : ` (${error.code})`;
  const lines = [`${result.outcome}${code}: ${error.message}`];
  const stderrTail = typeof error.details?.stderrTail === "string" ? error.details.stderrTail : "";
  if (stderrTail !== "") {
    const tail = stderrTail.split("\n").slice(-stderrTailLines);
    lines.push(`the server's stderr (last ${tail.length} line${tail.length === 1 ? "" : "s"}):`);
    for (const line of tail) lines.push(`  | ${line}`);
  }
  const approvals = result.pendingApprovals ?? [];
  for (const approval of approvals) lines.push(...`pending ${pendingApprovalText(approval)}`.split("\n"));
  // Nothing is stored for a run that failed before its session started: there is nothing to show or resume.
  const stored = result.transcript.entries > 0;
  lines.push(stored ? `run ${result.runId}` : `run ${result.runId} did not start; nothing was stored`);
  const questions = approvals.filter((approval) => approval.question !== undefined);
  const toApprove = approvals.filter((approval) => approval.question === undefined);
  if (questions.length > 0) {
    const answers = questions.map((approval) => `--answer '${approval.callId}={...}'`).join(" ");
    lines.push(`  answer:   charter resume ${runId} ${answers}   (a JSON object, or decline)`);
  }
  if (toApprove.length > 0) {
    const ids = toApprove.map((approval) => approval.callId);
    lines.push(`  approve:  charter resume ${runId} ${ids.map((id) => `--approve ${id}`).join(" ")}`);
    lines.push(`  deny:     charter resume ${runId} ${ids.map((id) => `--deny ${id}`).join(" ")}`);
  }
  if (approvals.length === 0 && stored && result.outcome === "INTERRUPTED") {
    lines.push(`  continue: charter resume ${runId}`);
  }
  if (stored) lines.push(`  inspect:  charter runs show ${runId} --conversation`);
  return lines.map((line) => `charter: ${line}\n`).join("");
}
