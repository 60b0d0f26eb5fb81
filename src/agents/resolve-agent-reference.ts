import { resolve } from "node:path";
import { type AgentDefinition, loadAgentFile } from "../config/agent-file.js";
import { isAgentIdReference } from "../config/agent-reference.js";
import type { AgentRegistry } from "./agent-registry.js";

/** An agent reference resolved: the agent, and what `runAgent` takes as `agentPath` to run exactly it. */
export interface ResolvedAgentReference {
  readonly agent: AgentDefinition;
  /**
   * The agent file's absolute path, or, for a built-in agent (which has no file), its id: `runAgent` runs either
   * (an id needs the registry catalog, which the CLI and the library's `runAgent` supply).
   */
  readonly agentPath: string;
}

/**
 * Resolves what a user wrote to name an agent (`charter run <reference>`, an `agents:` entry, a workflow step's
 * `agent:`): a registry id (lowercase letters, digits, hyphens) is looked up in the registry (AGENT_NOT_FOUND,
 * AGENT_DISABLED); anything else is an agent file path, relative to `fromDirectory` (AGENT_FILE_INVALID when it
 * does not load).
 */
export async function resolveAgentReference(
  registry: AgentRegistry,
  reference: string,
  fromDirectory: string,
): Promise<ResolvedAgentReference> {
  if (isAgentIdReference(reference)) {
    const agent = registry.require(reference);
    return { agent, agentPath: agent.builtIn ? agent.id : agent.path };
  }
  const agent = await loadAgentFile(resolve(fromDirectory, reference));
  return { agent, agentPath: agent.path };
}
