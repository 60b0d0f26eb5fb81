import { homedir } from "node:os";
import { dirname, resolve } from "node:path";
import { loadAgentFile } from "../config/agent-file.js";
import { isAgentIdReference } from "../config/agent-reference.js";
import type { AgentSettings } from "../config/agent-settings-schema.js";
import { loadConfiguration } from "../config/load-configuration.js";
import { parseSetOverrides } from "../config/parse-set-overrides.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { systemEnvironment } from "../foundation/environment.js";
import { createToolCallExecutor } from "../tools/create-tool-call-executor.js";
import type { ToolSource } from "../tools/tool-definition.js";
import { ToolRegistry } from "../tools/tool-registry.js";
import type { RunInvocation } from "./durable-run-hooks.js";
import type { LiveTools } from "./replay-tool-calls.js";
import { startToolSources } from "./start-tool-sources.js";

/**
 * `charter replay --live-tools`: the recorded run's tools executed for real (for debugging), started from the
 * agent file and configuration the run was invoked with, under the recorded contract's policy. Which calls may
 * run again is the replay's decision (replay-tool-calls.ts): only read-only and idempotent ones that ran in the
 * record, judged with the destructive tools the run's configuration names.
 */
export async function createLiveToolExecutor(
  invocation: RunInvocation,
  contract: ExecutionContract,
): Promise<{ tools: LiveTools; close: () => Promise<void> }> {
  const environment = systemEnvironment;
  // A run records an id instead of a file only for a built-in agent, which sets no tools of its own: its tools are
  // the configuration's.
  const builtIn = isAgentIdReference(invocation.agent_path);
  const settings: AgentSettings = builtIn ? {} : (await loadAgentFile(invocation.agent_path)).settings;
  const loaded = await loadConfiguration({
    ...(invocation.config_path !== null ? { configPath: invocation.config_path } : {}),
    cwd: invocation.cwd,
    ...(builtIn ? {} : { promptDirectory: dirname(resolve(invocation.agent_path)) }),
    homeDirectory: homedir(),
  });
  const overrides = parseSetOverrides(invocation.set);
  const defaults = loaded.configuration.defaults;
  const references = overrides.tools ?? settings.tools ?? defaults.tools ?? [];
  const sources: ToolSource[] = [];
  const started = await startToolSources(references, loaded.configuration, {
    cwd: invocation.cwd,
    environment,
  });
  sources.push(...started.sources);
  const registry = new ToolRegistry(started.tools);
  const executor = createToolCallExecutor({
    registry,
    policy: contract,
    environment,
    runId: "live-tools",
    outputStore: null,
  });
  return {
    // As runAgent's approval guard reads them: `--set`, else the agent file's list, else the configuration's.
    tools: {
      executor,
      destructiveTools:
        overrides.destructiveTools ?? settings.destructiveTools ?? defaults.destructiveTools ?? [],
      sourceOf: (name) => registry.get(name)?.manifest.source ?? null,
    },
    close: async () => void (await Promise.allSettled(sources.map((source) => source.close()))),
  };
}
