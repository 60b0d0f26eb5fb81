import type { AgentDefinition as AgentFile } from "../config/agent-file.js";
import type { AgentSelectionRecord } from "../contract/agent-selection-record.js";
import type { ToolManifestEntry } from "../contract/execution-contract.js";
import { deepFreeze } from "../foundation/deep-freeze.js";
import type { AIAgentResult } from "../session/agent-result.js";
import { finalReportText } from "../session/final-report.js";
import { toolCallTransactionId } from "../session/observe-tool-results.js";
import type { RegisteredTool, ToolExecutionContext } from "../tools/tool-definition.js";
import type { AgentSelection } from "./agent-catalog.js";
import { childDelegationTrace, type DelegationTrace, delegationRefusal } from "./delegation-trace.js";

/** The built-in tool an agent with `delegation: auto` is offered. */
export const delegateToolName = "delegate";

/** Runs the chosen agent for a `delegate` call; supplied by the runner, which knows configuration and tools. */
export type DelegateRunner = (
  child: AgentFile,
  task: string,
  trace: DelegationTrace,
  signal: AbortSignal,
  selection: AgentSelectionRecord,
) => Promise<AIAgentResult>;

const inputSchema = {
  type: "object",
  properties: {
    task: {
      type: "string",
      minLength: 1,
      description:
        "The sub-task, in full: the agent that takes it sees only this text, not your conversation.",
    },
  },
  required: ["task"],
  additionalProperties: false,
};

/**
 * `delegate`: hands a sub-task to the agent the registry's selector ranks first for it, among the agents not already
 * in the delegation chain (an agent never delegates to itself or an ancestor), and returns that agent's final
 * report. The child runs a full session under its own contract, which records the selection in its decisions, one
 * level deeper: past `maxDepth` the call is refused, and when every agent the selector could choose is in the chain
 * it is refused as circular; both as tool errors naming the chain, never exceptions (seed 003 INV-DT-001/002).
 */
export function createDelegateTool(options: {
  readonly trace: DelegationTrace;
  /** The delegating run's contract hash, known once its contract is built. */
  readonly parentContractHash: () => string | null;
  /** The selector: the best agent for the task outside `exclude`, or null when none is left. */
  readonly select: (task: string, exclude: readonly string[]) => Promise<AgentSelection | null>;
  readonly runChild: DelegateRunner;
}): RegisteredTool {
  const { trace } = options;
  const manifest: ToolManifestEntry = deepFreeze({
    name: delegateToolName,
    description:
      "Hands a sub-task to the agent best suited to it, chosen from the agent registry, and returns that agent's final report. Use it for work outside your own speciality.",
    input_schema: inputSchema,
    source: { kind: "function", server: null, tool: delegateToolName },
    annotations: null,
  });
  return {
    manifest,
    async execute(input, context: ToolExecutionContext) {
      const task = String(input.task);
      const selected = await options.select(task, trace.chain);
      if (selected === null) {
        return {
          text: `delegation cycle: every agent the selector could choose for this task is already in the chain ${trace.chain.join(" -> ")} (an agent may not delegate to itself or an ancestor)`,
          isError: true,
        };
      }
      const child = selected.agent;
      const refusal = delegationRefusal(trace, child.id);
      if (refusal !== null) return { text: refusal, isError: true };
      const childTrace = childDelegationTrace(
        trace,
        child.id,
        toolCallTransactionId(context.runId, context.callId),
        options.parentContractHash(),
      );
      const result = await options.runChild(child, task, childTrace, context.signal, selected.record);
      const confidence = selected.record.candidates.find(
        (candidate) => candidate.agentId === child.id,
      )?.confidence;
      const who = `delegated to '${child.id}'${confidence === undefined ? "" : ` (confidence ${confidence})`}`;
      const text = result.finalReport === null ? "(no report)" : finalReportText(result.finalReport);
      // The child's accounting joins the parent's, inside this call (its entries carry the delegation trace).
      return result.success
        ? { text: `${who}:\n${text}`, isError: false, accounting: result.accounting }
        : {
            text: `${who}, which ended ${result.outcome}: ${result.error?.code ?? ""} ${text}`,
            isError: true,
            accounting: result.accounting,
          };
    },
  };
}
