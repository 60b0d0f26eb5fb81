import type { AgentCatalog, AgentLookup } from "../runner/agent-catalog.js";
import { agentDirectories } from "./agent-directories.js";
import type { AgentRegistry } from "./agent-registry.js";
import { loadAgentRegistry } from "./load-agent-registry.js";

/**
 * The runner's hook into the registry. Given a registry, it answers from that one; otherwise it loads the
 * registry of each lookup's configuration (its `agentsDir`, else `./agents`), once per set of folders, so that a
 * run and its sub-agents read the folders once.
 */
export function createAgentCatalog(registry?: AgentRegistry): AgentCatalog {
  const loaded = new Map<string, Promise<AgentRegistry>>();
  function registryFor(lookup: AgentLookup): Promise<AgentRegistry> {
    if (registry !== undefined) return Promise.resolve(registry);
    const key = JSON.stringify([lookup.cwd, agentDirectories(lookup.configuration, lookup.cwd)]);
    let found = loaded.get(key);
    if (found === undefined) {
      found = loadAgentRegistry({ configuration: lookup.configuration, cwd: lookup.cwd });
      loaded.set(key, found);
    }
    return found;
  }
  return {
    async resolve(id, lookup) {
      return (await registryFor(lookup)).require(id);
    },
  };
}
