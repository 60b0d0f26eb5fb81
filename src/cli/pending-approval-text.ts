import type { PendingApproval } from "../session/pending-approval.js";

/** One pending call on one line, `<call-id>  <tool>  <arguments as JSON>`, so that nobody approves blind. */
export function pendingApprovalText(approval: PendingApproval): string {
  return `${approval.callId}  ${approval.tool}  ${JSON.stringify(approval.arguments)}`;
}
