import type { AgentCatalog, AgentLookup } from "../runner/agent-catalog.js";
import { agentDirectories } from "./agent-directories.js";
import type { AgentRegistry } from "./agent-registry.js";
import { loadAgentRegistry } from "./load-agent-registry.js";
import { selectAgents } from "./select-agents.js";

/** How many of the ranked candidates a contract records beside the one chosen. */
const recordedCandidates = 10;

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
    async select(task, lookup, exclude = []) {
      const registry = await registryFor(lookup);
      const candidates = selectAgents(registry, task, { exclude });
      const best = candidates[0];
      // Only a match, or the fallback, is chosen: a candidate at 0 (only its notForTasks matched) never is.
      if (best === undefined || best.confidence === 0) return null;
      return {
        agent: registry.require(best.agentId),
        record: { selected: best.agentId, candidates: candidates.slice(0, recordedCandidates) },
      };
    },
  };
}
