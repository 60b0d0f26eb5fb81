import type { ExecutionContractContent } from "../contract/execution-contract.js";

/**
 * The part of the execution contract the tool pipeline enforces. It is a structural subset of the contract,
 * so the session passes the frozen contract itself: no copy per call.
 */
export type ToolCallPolicy = Readonly<
  Pick<
    ExecutionContractContent,
    "allowed_tools" | "tool_policy" | "cycle_forbid" | "tool_timeout_ms" | "tool_output_budget"
  >
>;
