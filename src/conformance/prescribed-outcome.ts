import type { AgentOutcome } from "../contract/agent-outcome.js";
import type { ToolPolicy } from "../contract/execution-contract.js";
import type { ModelBehaviour } from "./classify-model-behaviour.js";

/**
 * The outcome class the execution contract prescribes for what the model did: the corpus's oracle, written from
 * the contract's rules rather than from the state machine's code, so that the two can disagree.
 * - a tool call under `forbidden` is a contract violation;
 * - unparseable tool calls past the format retries are a malformed-protocol failure;
 * - ending without a tool having run, by text or by a report, is a no-tools failure under `required` and a chat-only
 *   success otherwise; ending after one ran is a success with tools;
 * - a model still calling tools when its turns ran out, and an endpoint that keeps failing or answering nothing,
 *   exhaust a budget; credentials the endpoint refuses are a setup fault.
 */
export function prescribedOutcome(
  behaviour: ModelBehaviour,
  toolPolicy: ToolPolicy,
  agentToolsExecuted: number,
): AgentOutcome {
  switch (behaviour) {
    case "called_forbidden_tool":
      return "FAILED_CONTRACT_VIOLATION";
    case "malformed_output":
      return "FAILED_PROTOCOL_MALFORMED";
    case "called_tools_and_reported":
      return "COMPLETED_WITH_TOOLS";
    case "narrated":
    case "reported_without_tools":
      if (agentToolsExecuted > 0) return "COMPLETED_WITH_TOOLS";
      return toolPolicy === "required" ? "FAILED_PROTOCOL_NO_TOOLS" : "COMPLETED_CHAT_ONLY";
    case "kept_calling_tools":
    case "unusable_responses":
    case "endpoint_failed":
      return "FAILED_BUDGET_EXHAUSTED";
    case "endpoint_refused_credentials":
      return "FAILED_PREFLIGHT";
  }
}
