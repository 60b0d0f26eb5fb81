import { resolve } from "node:path";

/**
 * The agent file a step's `agent:` names: a path relative to the workflow file's directory. The one place a step's
 * agent is resolved, so that registry ids (`agent: researcher`) can be looked up here once the agent registry
 * exists, while anything with a `/` or ending in `.md` stays a path.
 */
export function resolveStepAgent(agent: string, workflowDirectory: string): string {
  return resolve(workflowDirectory, agent);
}
