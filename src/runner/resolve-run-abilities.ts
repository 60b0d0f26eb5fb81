import type { AgentAbilities } from "../abilities/agent-abilities.js";
import { resolveAgentAbilities } from "../abilities/resolve-agent-abilities.js";
import type { AgentDefinition as AgentFile } from "../config/agent-file.js";
import type { AgentSettings } from "../config/agent-settings-schema.js";
import type { RunContext } from "./run-context.js";

/**
 * The abilities an agent names, resolved against the run's abilities folder (null when it names none). Called for
 * the agent that runs and, when it is loaded, for each of its sub-agents: an ability that does not exist stops the
 * run before anything starts or is stored.
 */
export function resolveRunAbilities(
  context: RunContext,
  agent: AgentFile,
  overrides: AgentSettings,
): Promise<AgentAbilities | null> {
  return resolveAgentAbilities({
    agentFile: agent.path,
    layers: { overrides, agent: agent.settings, defaults: context.loaded.configuration.defaults },
    loadLibrary: context.abilityLibrary,
  });
}
