/** The ten typed terminal outcomes of seed 002 §4.5. Every run ends in exactly one. */
export const agentOutcomes = [
  "COMPLETED_WITH_TOOLS",
  "COMPLETED_CHAT_ONLY",
  "FAILED_PREFLIGHT",
  "FAILED_PROTOCOL_NO_TOOLS",
  "FAILED_PROTOCOL_MALFORMED",
  "FAILED_VALIDATION",
  "FAILED_BUDGET_EXHAUSTED",
  "FAILED_TIMEOUT",
  "FAILED_CONTRACT_VIOLATION",
  "INTERRUPTED",
] as const;

export type AgentOutcome = (typeof agentOutcomes)[number];

export function isSuccessfulOutcome(outcome: AgentOutcome): boolean {
  return outcome === "COMPLETED_WITH_TOOLS" || outcome === "COMPLETED_CHAT_ONLY";
}
