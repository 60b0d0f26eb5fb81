import { resolve } from "node:path";
import { type AgentDefinition as AgentFile, loadAgentFile } from "../config/agent-file.js";
import { isAgentIdReference } from "../config/agent-reference.js";
import {
  type LoadConfigurationOptions,
  type LoadedConfiguration,
  loadConfiguration as loadConfigurationFiles,
} from "../config/load-configuration.js";
import type { AgentSelectionRecord } from "../contract/agent-selection-record.js";
import { CharterError } from "../foundation/charter-error.js";
import {
  type AgentCatalog,
  type AgentLookup,
  type AgentSelection,
  autoAgentReference,
} from "./agent-catalog.js";
import { resolveAgentId } from "./resolve-agent-id.js";
import type { RunAgentOptions } from "./run-agent-options.js";

/**
 * The agent to run and the configuration it runs under. A file's directory is configuration layer 3; an id is
 * looked up with the configuration found without that layer (its `agentsDir`), and then, for an agent with a
 * file, the configuration is loaded again with the file's directory as layer 3, as for a path.
 */
export async function loadTopLevelAgent(
  options: RunAgentOptions,
  configurationOptions: LoadConfigurationOptions,
  cwd: string,
  recordedSelection: AgentSelectionRecord | null,
): Promise<{ agent: AgentFile; loaded: LoadedConfiguration; selection: AgentSelectionRecord | null }> {
  const loadConfiguration = options.configurationCache?.load ?? loadConfigurationFiles;
  if (!isAgentIdReference(options.agentPath)) {
    const agent = await loadAgentFile(resolve(cwd, options.agentPath));
    return {
      agent,
      loaded: await loadConfiguration({ ...configurationOptions, promptDirectory: agent.directory }),
      selection: recordedSelection,
    };
  }
  const base = await loadConfiguration(configurationOptions);
  const lookup = { configuration: base.configuration, cwd };
  let agent: AgentFile;
  let selection = recordedSelection;
  if (options.agentPath === autoAgentReference) {
    const selected = await selectAgent(options.agentCatalog ?? null, options.prompt, lookup);
    agent = selected.agent;
    selection = selected.record;
    options.onAgentSelection?.(selection);
  } else {
    agent = await resolveAgentId(options.agentCatalog ?? null, options.agentPath, lookup);
  }
  if (agent.builtIn) return { agent, loaded: base, selection };
  return {
    agent,
    loaded: await loadConfiguration({ ...configurationOptions, promptDirectory: agent.directory }),
    selection,
  };
}

/** `auto`: the agent the registry's selector picks for the prompt; AGENT_NOT_FOUND says why there is none. */
async function selectAgent(
  catalog: AgentCatalog | null,
  task: string,
  lookup: AgentLookup,
): Promise<AgentSelection> {
  if (catalog === null) {
    throw new CharterError(
      "AGENT_NOT_FOUND",
      "'auto' selects an agent from the registry, and no agent registry was given (pass agentCatalog)",
      { details: { id: autoAgentReference, reason: "no_registry" } },
    );
  }
  const selected = await catalog.select(task, lookup);
  if (selected === null) {
    throw new CharterError("AGENT_NOT_FOUND", "no agent of the registry can take this task", {
      details: { id: autoAgentReference, reason: "nothing_selected" },
    });
  }
  return selected;
}
