import { resolve } from "node:path";
import { loadAgentFile } from "../config/agent-file.js";
import { isAgentIdReference } from "../config/agent-reference.js";
import { formatKeyPath } from "../config/schema-issues.js";
import { CharterError } from "../foundation/charter-error.js";
import type { AgentCatalog, AgentLookup } from "../runner/agent-catalog.js";
import type { WorkflowIssue } from "./check-workflow-definition.js";
import type { LoadedWorkflow } from "./load-workflow-file.js";
import type { WorkflowAction } from "./workflow-definition.js";

/**
 * Every agent the workflow's steps and compensations name, resolved as their runs will resolve them: a registry id
 * in the agent registry of the configuration (unknown or disabled is a problem), a path as an agent file relative to
 * the workflow file (missing or not valid is a problem). Returns one problem per reference that does not resolve,
 * naming its key (`steps[1].agent`, `steps[1].compensate.agent`) and step.
 */
export async function checkWorkflowAgents(
  loaded: LoadedWorkflow,
  lookup: AgentLookup,
  catalog: AgentCatalog,
): Promise<WorkflowIssue[]> {
  const issues: WorkflowIssue[] = [];
  const check = async (action: WorkflowAction | null, path: readonly (string | number)[], step: string) => {
    if (action?.kind !== "agent") return;
    try {
      if (isAgentIdReference(action.agent)) await catalog.resolve(action.agent, lookup);
      else await loadAgentFile(resolve(loaded.directory, action.agent));
    } catch (error) {
      const reason = CharterError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
      issues.push({
        key: formatKeyPath(path),
        path,
        step,
        message: `agent "${action.agent}" cannot be run: ${reason}`,
      });
    }
  };
  for (const step of loaded.definition.steps) {
    await check(step.action, ["steps", step.index, "agent"], step.id);
    await check(step.compensate, ["steps", step.index, "compensate", "agent"], step.id);
  }
  return issues;
}
