import { resolve } from "node:path";
import { type AgentDefinition as AgentFile, loadAgentFile } from "../config/agent-file.js";
import { isAgentIdReference } from "../config/agent-reference.js";
import type { AgentSelectionRecord } from "../contract/agent-selection-record.js";
import { CharterError } from "../foundation/charter-error.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { RegisteredTool } from "../tools/tool-definition.js";
import { createDelegateTool } from "./delegate-tool.js";
import type { DelegationTrace } from "./delegation-trace.js";
import { resolveAgentId } from "./resolve-agent-id.js";
import { resolveRunAbilities } from "./resolve-run-abilities.js";
import type { RunContext } from "./run-context.js";
import { createSubAgentTool } from "./sub-agent-tool.js";

/** Runs a sub-agent for a tool call: `runLoadedAgent` under the parent's run, passed in so that neither imports the other. */
export type RunChildAgent = (
  child: AgentFile,
  prompt: string,
  trace: DelegationTrace,
  signal: AbortSignal | undefined,
  selection: AgentSelectionRecord | null,
) => Promise<AIAgentResult>;

/**
 * The tools through which an agent calls other agents: one per sub-agent its `agents` lists (files relative to the
 * listing file, or registry ids), each loaded and its abilities checked now rather than at its first call, and,
 * with `delegation: auto`, the delegate tool, which hands a sub-task to the agent the registry's selector picks.
 */
export async function subAgentTools(
  context: RunContext,
  agent: AgentFile,
  trace: DelegationTrace,
  parentContractHash: () => string | null,
  runChild: RunChildAgent,
): Promise<RegisteredTool[]> {
  const configuration = context.loaded.configuration;
  const tools: RegisteredTool[] = [];
  for (const reference of agent.settings.agents ?? []) {
    const child = isAgentIdReference(reference)
      ? await resolveAgentId(context.catalog, reference, { configuration, cwd: context.cwd })
      : await loadAgentFile(resolve(agent.directory, reference));
    // A sub-agent's abilities are checked now, with its file, not when it is first called.
    await resolveRunAbilities(context, child, {});
    tools.push(
      createSubAgentTool({
        child,
        trace,
        parentContractHash,
        runChild: (childAgent, childPrompt, childTrace, childSignal) =>
          runChild(childAgent, childPrompt, childTrace, childSignal, null),
      }),
    );
  }
  if (agent.profile.delegation === "auto") {
    const catalog = context.catalog;
    if (catalog === null) {
      throw new CharterError(
        "AGENT_NOT_FOUND",
        `agent ${agent.id} has delegation: auto, which selects agents from the registry, and no agent registry was given (pass agentCatalog)`,
        { details: { id: agent.id, key: "delegation", reason: "no_registry" } },
      );
    }
    tools.push(
      createDelegateTool({
        trace,
        parentContractHash,
        select: (task, exclude) => catalog.select(task, { configuration, cwd: context.cwd }, exclude),
        runChild,
      }),
    );
  }
  return tools;
}
