import { join } from "node:path";
import type { Configuration } from "../config/configuration-schema.js";

/** A folder the registry reads agent files from; `explicit` when the configuration named it (it must exist). */
export interface AgentDirectory {
  readonly path: string;
  readonly explicit: boolean;
}

/**
 * The registry's folders: the configuration's `agentsDir` (absolute already: each layer's paths are resolved
 * against its own file), or else `./agents` in the working directory, read only when it exists.
 */
export function agentDirectories(configuration: Configuration, cwd: string): readonly AgentDirectory[] {
  if (configuration.agentsDir !== null)
    return configuration.agentsDir.map((path) => ({ path, explicit: true }));
  return [{ path: join(cwd, "agents"), explicit: false }];
}
