import type { AgentMessage } from "../contract/agent-message.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import type { ModelPricing } from "../model/compute-cost.js";
import type { ModelToolSpec } from "../model/model-client.js";

/** The outcome of validating `final_report` arguments (see tools/builtin/final-report-tool.ts). */
export type FinalReportValidation =
  | {
      readonly ok: true;
      readonly report: {
        format: string;
        content?: string;
        content_json?: unknown;
        metadata?: Record<string, unknown>;
      };
    }
  | {
      readonly ok: false;
      readonly errors: readonly string[];
      readonly code: "TOOL_INPUT_INVALID" | "OUTPUT_SCHEMA_INVALID";
    };

/**
 * Everything the pure transition function needs besides state and event. All members are deterministic
 * functions of their inputs, so replaying the same events over the same context gives the same states.
 */
export interface SessionContext {
  readonly contract: ExecutionContract;
  readonly agentId: string;
  readonly callPath: string;
  /** For sub-agent runs: the delegating tool call's transaction and the root of the chain (seed 003). */
  readonly parentTxnId: string | null;
  readonly originTxnId: string | null;
  /** Prices per contract model target (same order), for `costUsd` on accounting entries; null when unknown. */
  readonly pricing: readonly (ModelPricing | null)[];
  countMessage(message: AgentMessage): number;
  countTools(tools: readonly ModelToolSpec[]): number;
  /** Tool specs offered to the model: every allowed tool, or only `final_report` on a forced final turn. */
  toolSpecs(onlyFinalReport: boolean): readonly ModelToolSpec[];
  /**
   * True for a tool of the agent's own (MCP, REST, function tool, sub-agent); false for Charter's built-ins
   * (`final_report`, `tool_output`) and for names the manifest does not hold. Only executions of agent tools
   * satisfy `tool_policy: required` (seed 002 Invariant C): reading a stored output or reporting is not acting.
   */
  isAgentTool(name: string): boolean;
  validateFinalReport(args: Readonly<Record<string, unknown>>): FinalReportValidation;
  /** Validates a text answer used as the report when the output format is json. */
  validateTextAsJsonReport(text: string): FinalReportValidation;
}
