import type { PendingApproval } from "../session/pending-approval.js";

/**
 * One pending call on one line, `<call-id>  <tool>  <arguments as JSON>`, so that nobody approves blind; a call
 * waiting for an answer adds its server's question and the JSON Schema of the answer it wants.
 */
export function pendingApprovalText(approval: PendingApproval): string {
  const call = `${approval.callId}  ${approval.tool}  ${JSON.stringify(approval.arguments)}`;
  const question = approval.question;
  if (question === undefined) return call;
  return `${call}\n  question from ${question.server}: ${question.message}\n  answer schema: ${JSON.stringify(question.requestedSchema)}`;
}
