import type { AgentMessage } from "../contract/agent-message.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import type { ModelPricing } from "../model/compute-cost.js";
import type { ModelToolSpec } from "../model/model-client.js";
import type { SessionRules } from "./session-rules.js";

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
/**
 * Who a run is for and what its runtime binds to the chain, recorded in its PRECHECK entry (and the ids on every
 * accounting entry): the tenant and the caller's correlation id (null: none), and `bound_records: 1` when the
 * records the runtime keeps beside the chain (a run store's checkpoints and tool results) are bound to it by
 * RECORD entries, so that verification knows every such record of the run must be bound.
 */
export interface RunIdentity {
  readonly tenant_id: string | null;
  readonly correlation_id: string | null;
  readonly bound_records?: 1;
}

export interface SessionContext {
  readonly contract: ExecutionContract;
  /** Recorded in PRECHECK when set; absent for sessions that record none (and runs recorded before). */
  readonly runIdentity?: RunIdentity | null;
  /** The rules of the contract's schema version (session-rules.ts). */
  readonly rules: SessionRules;
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
