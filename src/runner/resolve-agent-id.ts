import type { AgentDefinition as AgentFile } from "../config/agent-file.js";
import { CharterError } from "../foundation/charter-error.js";
import type { AgentCatalog } from "./agent-catalog.js";

/**
 * The agent an id names (the top-level agent given by id, or a sub-agent listed by id), from the registry; an id
 * without a registry is AGENT_NOT_FOUND that says how to name the file instead.
 */
export function resolveAgentId(
  catalog: AgentCatalog | null,
  id: string,
  lookup: Parameters<AgentCatalog["resolve"]>[1],
): Promise<AgentFile> {
  if (catalog === null) {
    throw new CharterError(
      "AGENT_NOT_FOUND",
      `'${id}' is an agent id, and no agent registry was given to look it up (pass agentCatalog, or name the file: ./${id}.md)`,
      { details: { id, reason: "no_registry" } },
    );
  }
  return catalog.resolve(id, lookup);
}
