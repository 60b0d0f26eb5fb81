import { resolve } from "node:path";
import { isAgentIdReference } from "../config/agent-reference.js";

/**
 * What a step's `agent:` names, as `runAgent` takes it: a registry id (`researcher`: lowercase letters, digits and
 * hyphens) stays an id, which the run resolves in the agent registry of its configuration; anything else (with a
 * `/`, or ending in `.md`) is an agent file path, relative to the workflow file's directory.
 */
export function resolveStepAgent(agent: string, workflowDirectory: string): string {
  return isAgentIdReference(agent) ? agent : resolve(workflowDirectory, agent);
}
