import type { AgentDefinition } from "../config/agent-file.js";
import type { Configuration } from "../config/configuration-schema.js";

/** What a registry lookup is made in: the configuration the run loaded (its `agentsDir`) and its working directory. */
export interface AgentLookup {
  readonly configuration: Configuration;
  readonly cwd: string;
}

/**
 * The agent registry as the runner sees it. The registry sits above the runner (src/agents), so the runner only
 * takes this hook, which the CLI and the library's `runAgent` supply: it resolves agent references that are ids
 * (`charter run reviewer`, `agents: [reviewer]`), never file paths, which the runner reads itself.
 */
export interface AgentCatalog {
  /** The enabled agent with this id; throws AGENT_NOT_FOUND or AGENT_DISABLED. */
  resolve(id: string, lookup: AgentLookup): Promise<AgentDefinition>;
}
