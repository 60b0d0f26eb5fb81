import { homedir } from "node:os";
import { dirname, resolve } from "node:path";
import { type AgentDefinition, loadAgentFile } from "../config/agent-file.js";
import { type LoadedConfiguration, loadConfiguration } from "../config/load-configuration.js";
import type { AgentSetupOptions } from "./agent-setup-options.js";

/** The agent file's absolute path, or null when none was given. */
export function agentPathOf(options: AgentSetupOptions): string | null {
  return options.agentPath === undefined ? null : resolve(options.cwd ?? process.cwd(), options.agentPath);
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

/** The agent file and the configuration, each checked; throws the first typed error (file and key named). */
export async function loadAgentSetup(
  options: AgentSetupOptions,
): Promise<{ loaded: LoadedConfiguration; agent: AgentDefinition | null }> {
  const agentPath = agentPathOf(options);
  const agent = agentPath === null ? null : await loadAgentFile(agentPath);
  return { loaded: await loadSetupConfiguration(options), agent };
}
