import { registryProblemError } from "./agent-problem.js";
import type { AgentRegistry } from "./agent-registry.js";
import { type LoadAgentRegistryOptions, scanAgentRegistry } from "./scan-agent-registry.js";

export type { LoadAgentRegistryOptions } from "./scan-agent-registry.js";

/**
 * The registry of a project's agents: every agent file in the configured folders (`agentsDir`, else `./agents`),
 * each validated, plus the built-in `standard` agent. A registry with any problem (a file that does not validate,
 * two files with one id, a disabled `standard`, a configured folder that does not exist) is refused whole, with the
 * first problem's typed error naming the file and key (`details.problems` holds them all), so that no run depends on
 * which of two conflicting files happened to load.
 */
export async function loadAgentRegistry(options: LoadAgentRegistryOptions = {}): Promise<AgentRegistry> {
  const scan = await scanAgentRegistry(options);
  if (scan.problems.length > 0) throw registryProblemError(scan.problems);
  return scan.registry;
}
