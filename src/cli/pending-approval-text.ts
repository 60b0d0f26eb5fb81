import type { PendingApproval } from "../session/pending-approval.js";

/** One pending call on one line, `<call-id>  <tool>  <arguments as JSON>`, so that nobody approves blind. */
export function pendingApprovalText(approval: PendingApproval): string {
  return `${approval.callId}  ${approval.tool}  ${JSON.stringify(approval.arguments)}`;
}

/** What `charter run` and `charter resume` add to their stop message when the run waits for approvals. */
export function pendingApprovalsStopText(runId: string, approvals: readonly PendingApproval[]): string {
  if (approvals.length === 0) return "";
  const lines = approvals.map((approval) => `charter: pending ${pendingApprovalText(approval)}\n`);
  const ids = approvals.map((approval) => approval.callId);
  const approve = ids.map((id) => `--approve ${id}`).join(" ");
  const deny = ids.map((id) => `--deny ${id}`).join(" ");
  return `${lines.join("")}charter: continue with: charter resume ${runId} ${approve}   (or ${deny})\n`;
}
