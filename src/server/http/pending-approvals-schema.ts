/**
 * The JSON schema of the calls a workflow run or a work item run waits on (`pendingApprovals` of their views): each
 * call as an agent run's `pendingApprovals` shows it, with the agent run that waits on it and, in a workflow, its step.
 */
export const serverPendingApprovalsSchema = {
  type: "array",
  description:
    "While the run is awaiting_approval: the calls it waits on a person for (POST .../approvals decides them).",
  items: {
    type: "object",
    required: ["stepId", "runId", "turn", "callId", "tool", "arguments"],
    properties: {
      stepId: {
        type: ["string", "null"],
        description: "The workflow step whose run waits (null for a work item).",
      },
      runId: { type: "string", description: "The agent run that waits on the call." },
      turn: { type: "integer" },
      callId: { type: "string" },
      tool: { type: "string" },
      arguments: { description: "The call's arguments, secrets redacted." },
      question: { type: "object", additionalProperties: true },
    },
  },
} as const;
