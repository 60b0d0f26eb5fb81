import type { AgentDefinition } from "../config/agent-file.js";
import type { AgentSettings, DelegationMode } from "../config/agent-settings-schema.js";

/** An agent as `charter agents list --json` prints it. */
export interface AgentSummary {
  readonly id: string;
  readonly enabled: boolean;
  readonly builtIn: boolean;
  /** The agent file, or null for a built-in agent. */
  readonly path: string | null;
  readonly description: string | null;
  /** The agent's own model targets, or null when it uses the configuration's `defaults.models`. */
  readonly models: readonly string[] | null;
  readonly keywords: readonly string[];
  readonly exampleTasks: readonly string[];
  readonly notForTasks: readonly string[];
  readonly delegation: DelegationMode;
  /** Sub-agents (`agents`): files and registry ids. */
  readonly agents: readonly string[];
}

/** An agent as `charter agents show --json` prints it: the summary, every setting and the system prompt. */
export interface AgentDetails extends AgentSummary {
  readonly settings: AgentSettings;
  readonly systemPrompt: string;
}

export function agentSummary(agent: AgentDefinition): AgentSummary {
  return {
    id: agent.id,
    enabled: agent.profile.enabled,
    builtIn: agent.builtIn,
    path: agent.builtIn ? null : agent.path,
    description: agent.settings.description ?? null,
    models: agent.settings.models ?? null,
    keywords: agent.profile.keywords,
    exampleTasks: agent.profile.exampleTasks,
    notForTasks: agent.profile.notForTasks,
    delegation: agent.profile.delegation,
    agents: agent.settings.agents ?? [],
  };
}

export function agentDetails(agent: AgentDefinition): AgentDetails {
  return { ...agentSummary(agent), settings: agent.settings, systemPrompt: agent.systemPrompt };
}
