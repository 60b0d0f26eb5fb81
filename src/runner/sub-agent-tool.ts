import type { AgentDefinition as AgentFile } from "../config/agent-file.js";
import type { ToolManifestEntry } from "../contract/execution-contract.js";
import { deepFreeze } from "../foundation/deep-freeze.js";
import type { AIAgentResult } from "../session/agent-result.js";
import { finalReportText } from "../session/final-report.js";
import { toolCallTransactionId } from "../session/observe-tool-results.js";
import type { RegisteredTool, ToolExecutionContext } from "../tools/tool-definition.js";
import { childDelegationTrace, type DelegationTrace, delegationRefusal } from "./delegation-trace.js";

/** Runs a child agent for a sub-agent tool call; supplied by the runner, which knows configuration and tools. */
export type ChildRunner = (
  child: AgentFile,
  prompt: string,
  trace: DelegationTrace,
  signal: AbortSignal,
) => Promise<AIAgentResult>;

const defaultInputSchema = {
  type: "object",
  properties: { prompt: { type: "string", description: "The task for the sub-agent." } },
  required: ["prompt"],
  additionalProperties: false,
};

/**
 * A sub-agent as a tool: `agent__<child id>`. Its call runs a full child session under the child's own contract
 * (with `parent_contract_hash` set) and returns the child's final report. A delegation that would be too deep
 * or circular is refused as a tool error naming the chain, never an exception.
 */
export function createSubAgentTool(options: {
  readonly child: AgentFile;
  readonly trace: DelegationTrace;
  /** The delegating run's contract hash, known once the parent's contract is built. */
  readonly parentContractHash: () => string | null;
  readonly runChild: ChildRunner;
}): RegisteredTool {
  const { child, trace } = options;
  const declaredSchema = child.settings.inputSchema;
  const manifest: ToolManifestEntry = deepFreeze({
    name: `agent__${child.id}`,
    description:
      child.settings.description ??
      `Delegates a task to the '${child.id}' agent and returns its final report.`,
    input_schema: declaredSchema !== undefined ? { ...declaredSchema } : defaultInputSchema,
    source: { kind: "function", server: null, tool: `agent__${child.id}` },
    annotations: null,
  });
  return {
    manifest,
    async execute(input, context: ToolExecutionContext) {
      const refusal = delegationRefusal(trace, child.id);
      if (refusal !== null) return { text: refusal, isError: true };
      const prompt =
        declaredSchema === undefined && typeof input.prompt === "string"
          ? input.prompt
          : JSON.stringify(input);
      const childTrace = childDelegationTrace(
        trace,
        child.id,
        toolCallTransactionId(context.runId, context.callId),
        options.parentContractHash(),
      );
      const result = await options.runChild(child, prompt, childTrace, context.signal);
      const text = result.finalReport === null ? "(no report)" : finalReportText(result.finalReport);
      // The child's accounting joins the parent's, inside this call (its entries carry the delegation trace).
      return result.success
        ? { text, isError: false, accounting: result.accounting }
        : {
            text: `sub-agent '${child.id}' ended ${result.outcome}: ${result.error?.code ?? ""} ${text}`,
            isError: true,
            accounting: result.accounting,
          };
    },
  };
}
