import type { AgentDefinition } from "../config/agent-file.js";
import type { Configuration } from "../config/configuration-schema.js";
import type { AgentSelectionRecord } from "../contract/agent-selection-record.js";

/** What a registry lookup is made in: the configuration the run loaded (its `agentsDir`) and its working directory. */
export interface AgentLookup {
  readonly configuration: Configuration;
  readonly cwd: string;
}

/** The agent a selector chose for a task, and how (what the contract records). */
export interface AgentSelection {
  readonly agent: AgentDefinition;
  readonly record: AgentSelectionRecord;
}

/** The reference `charter run` and `runAgent` take to have the agent chosen by selection. */
export const autoAgentReference = "auto";

/**
 * The agent registry as the runner sees it. The registry sits above the runner (src/agents), so the runner only
 * takes this hook, which the CLI and the library's `runAgent` supply: it resolves agent references that are ids
 * (`charter run reviewer`, `agents: [reviewer]`), never file paths, which the runner reads itself, and selects an
 * agent for a task (`charter run auto`, the `delegate` tool).
 */
export interface AgentCatalog {
  /** The enabled agent with this id; throws AGENT_NOT_FOUND or AGENT_DISABLED. */
  resolve(id: string, lookup: AgentLookup): Promise<AgentDefinition>;
  /**
   * The best agent for the task among the enabled ones not in `exclude`, or null when none is left (the fallback
   * `standard` agent excluded and nothing else matching).
   */
  select(task: string, lookup: AgentLookup, exclude?: readonly string[]): Promise<AgentSelection | null>;
}
