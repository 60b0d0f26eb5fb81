import { homedir } from "node:os";
import { dirname, resolve } from "node:path";
import { type AgentDefinition, loadAgentFile } from "../config/agent-file.js";
import { isAgentIdReference } from "../config/agent-reference.js";
import { type LoadedConfiguration, loadConfiguration } from "../config/load-configuration.js";
import { CharterError } from "../foundation/charter-error.js";
import type { AgentSetupOptions } from "./agent-setup-options.js";

/** The agent file's absolute path, or null when none was given or the agent is named by registry id. */
export function agentPathOf(options: AgentSetupOptions): string | null {
  if (options.agentPath === undefined || isAgentIdReference(options.agentPath)) return null;
  return resolve(options.cwd ?? process.cwd(), options.agentPath);
}

/** Loads the configuration layers as `charter run` does, the agent file's directory being layer 3. */
export function loadSetupConfiguration(options: AgentSetupOptions): Promise<LoadedConfiguration> {
  const cwd = options.cwd ?? process.cwd();
  const agentPath = agentPathOf(options);
  return loadConfiguration({
    ...(options.configPath !== undefined ? { configPath: resolve(cwd, options.configPath) } : {}),
    cwd,
    ...(agentPath !== null ? { promptDirectory: dirname(agentPath) } : {}),
    homeDirectory: options.homeDirectory ?? homedir(),
    ...(options.etcDirectory !== undefined ? { etcDirectory: options.etcDirectory } : {}),
    ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
  });
}

/**
 * The agent `options.agentPath` names, or null when it names none: a file is read; a registry id is resolved with
 * `options.agentCatalog` in `loaded`'s configuration, and then the configuration is loaded again with the agent's
 * folder as layer 3, as `charter run` does. Throws the typed error of what does not load.
 */
export async function loadSetupAgent(
  options: AgentSetupOptions,
  loaded: LoadedConfiguration,
): Promise<{ loaded: LoadedConfiguration; agent: AgentDefinition | null }> {
  const reference = options.agentPath;
  if (reference === undefined) return { loaded, agent: null };
  if (!isAgentIdReference(reference)) return { loaded, agent: await loadAgentFile(agentPathOf(options)!) };
  if (options.agentCatalog === undefined) {
    throw new CharterError(
      "AGENT_NOT_FOUND",
      `'${reference}' is an agent id, and no agent registry was given`,
      {
        details: { id: reference, reason: "no_registry" },
      },
    );
  }
  const agent = await options.agentCatalog.resolve(reference, {
    configuration: loaded.configuration,
    cwd: options.cwd ?? process.cwd(),
  });
  if (agent.builtIn) return { loaded, agent };
  return { loaded: await loadSetupConfiguration({ ...options, agentPath: agent.path }), agent };
}

/** The agent (file or registry id) and the configuration, each checked; throws the first typed error. */
export async function loadAgentSetup(
  options: AgentSetupOptions,
): Promise<{ loaded: LoadedConfiguration; agent: AgentDefinition | null }> {
  // The file is read first, as before: a missing agent file is reported before a configuration problem.
  if (agentPathOf(options) !== null) await loadAgentFile(agentPathOf(options)!);
  return loadSetupAgent(options, await loadSetupConfiguration(options));
}
