import type { ExecutionContract } from "../contract/execution-contract.js";
import type { ModelPricing } from "../model/compute-cost.js";
import type { ModelToolSpec } from "../model/model-client.js";
import type { TokenEstimator } from "../model/token-estimator.js";
import { finalReportToolName } from "./final-report.js";
import type { FinalReportValidation, SessionContext } from "./session-context.js";
import { sessionRules } from "./session-rules.js";

/**
 * Builds the session context from the frozen contract: the tool specs offered to the model are computed
 * once (all allowed tools, and `final_report` alone for forced final turns), and counting is memoised.
 */
export function createSessionContext(options: {
  readonly contract: ExecutionContract;
  readonly tokenEstimator: TokenEstimator;
  readonly validateFinalReport: (args: Readonly<Record<string, unknown>>) => FinalReportValidation;
  readonly validateTextAsJsonReport: (text: string) => FinalReportValidation;
  readonly callPath?: string;
  readonly parentTxnId?: string | null;
  readonly originTxnId?: string | null;
  readonly pricing?: readonly (ModelPricing | null)[];
}): SessionContext {
  const { contract, tokenEstimator } = options;
  const allowed =
    contract.allowed_tools === null ? null : new Set([...contract.allowed_tools, finalReportToolName]);
  const offered: ModelToolSpec[] = [];
  for (const tool of contract.tool_manifest) {
    if (allowed !== null && !allowed.has(tool.name)) continue;
    // Under `forbidden`, only the report channel is offered: any other tool call is a violation.
    if (contract.tool_policy === "forbidden" && tool.name !== finalReportToolName) continue;
    offered.push({ name: tool.name, description: tool.description, inputSchema: tool.input_schema });
  }
  const agentTools = new Set(
    contract.tool_manifest.filter((tool) => tool.source.kind !== "builtin").map((tool) => tool.name),
  );
  const allTools = Object.freeze(offered);
  const reportOnly = Object.freeze(offered.filter((tool) => tool.name === finalReportToolName));
  return {
    contract,
    rules: sessionRules(contract),
    agentId: contract.agent_id,
    callPath: options.callPath ?? contract.agent_id,
    parentTxnId: options.parentTxnId ?? null,
    originTxnId: options.originTxnId ?? null,
    pricing: options.pricing ?? [],
    countMessage: (message) => tokenEstimator.countMessage(message),
    countTools: (tools) => tokenEstimator.countTools(tools),
    toolSpecs: (onlyFinalReport) => (onlyFinalReport ? reportOnly : allTools),
    isAgentTool: (name) => agentTools.has(name),
    validateFinalReport: options.validateFinalReport,
    validateTextAsJsonReport: options.validateTextAsJsonReport,
  };
}
