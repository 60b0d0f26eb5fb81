import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { loadAbilityLibrary } from "../abilities/load-ability-library.js";
import type { LoadConfigurationOptions } from "../config/load-configuration.js";
import { parseSetOverrides } from "../config/parse-set-overrides.js";
import { systemEnvironment } from "../foundation/environment.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import type { AIAgentResult } from "../session/agent-result.js";
import { openRunStore } from "../store/open-run-store.js";
import type { RunStore } from "../store/run-store.js";
import { checkCorrelationId } from "./check-correlation-id.js";
import { defaultMaxDelegationDepth, rootDelegationTrace } from "./delegation-trace.js";
import { loadTopLevelAgent } from "./load-top-level-agent.js";
import { preflightFailureResult } from "./preflight-failure-result.js";
import type { ResumeRequest, RunAgentOptions } from "./run-agent-options.js";
import type { RunContext } from "./run-context.js";
import { runLoadedAgent } from "./run-loaded-agent.js";
import { selectRunStore } from "./select-run-store.js";

export type { ResumeRequest, RunAgentOptions, RunRouting } from "./run-agent-options.js";

/**
 * Runs one agent file end to end: loads it and the layered configuration, starts its MCP servers, offers its
 * sub-agents as tools, and runs it with a JSONL transcript in the run directory. Always returns an
 * AIAgentResult: failures before the session starts are FAILED_PREFLIGHT results whose error code says what
 * was wrong (and picks the exit code).
 */
export async function runAgent(options: RunAgentOptions): Promise<AIAgentResult> {
  return runAgentFile(options, null);
}

/** `runAgent`, or (with `resume`) the continuation of a stored run under the same run id. */
export async function runAgentFile(
  options: RunAgentOptions,
  resume: (ResumeRequest & { readonly runId: string }) | null,
): Promise<AIAgentResult> {
  const environment = options.environment ?? systemEnvironment;
  const cwd = options.cwd ?? process.cwd();
  const home = options.homeDirectory ?? homedir();
  const runId = resume?.runId ?? options.runId ?? environment.newId("run");
  let store: RunStore | null = null;
  // Created as soon as the configuration is loaded, so that a failure after it (opening the store, say) is redacted.
  const redactor = new SecretRedactor();
  try {
    checkCorrelationId(options.correlationId);
    const configurationOptions: LoadConfigurationOptions = {
      ...(options.configPath !== undefined ? { configPath: resolve(cwd, options.configPath) } : {}),
      cwd,
      homeDirectory: home,
      ...(options.etcDirectory !== undefined ? { etcDirectory: options.etcDirectory } : {}),
      ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
      ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
      ...(options.configurationOverlay !== undefined ? { overlay: options.configurationOverlay } : {}),
    };
    const { agent, loaded, selection } = await loadTopLevelAgent(
      options,
      configurationOptions,
      cwd,
      resume?.agentSelection ?? null,
    );
    // What resume starts again from: the agent file, or the id of a built-in agent (which has no file).
    const agentPath = agent.builtIn ? agent.id : agent.path;
    for (const secret of loaded.secrets) redactor.addSecret(secret.value, secret.label);
    options.onSecretRedactor?.(redactor);
    // Every query of the run (and of its sub-agents) is scoped by its tenant. A view of a given store is left open.
    store =
      options.runStore !== undefined
        ? options.runStore.forTenant(options.tenantId ?? null)
        : await openRunStore({
            tenantId: options.tenantId ?? null,
            ...(await selectRunStore({
              store: options.store,
              configured: loaded.configuration.store,
              homeDirectory: home,
              ...(options.processEnvironment !== undefined
                ? { processEnvironment: options.processEnvironment }
                : {}),
            })),
            environment,
          });
    const context: RunContext = {
      options,
      catalog: options.agentCatalog ?? null,
      environment,
      cwd,
      runsDirectory: options.runsDirectory ?? join(home, ".charter", "runs"),
      loaded,
      overrides: parseSetOverrides(options.set ?? []),
      redactor,
      store,
      invocation: {
        agent_path: agentPath,
        config_path: options.configPath !== undefined ? resolve(cwd, options.configPath) : null,
        cwd,
        set: options.set ?? [],
        ...(selection !== null ? { agent_selection: selection } : {}),
        ...(options.toolPermissions !== undefined
          ? {
              tool_permissions: {
                allowed_classes: options.toolPermissions.allowedClasses,
                pre_approved_tools_allowed: options.toolPermissions.preApprovedToolsAllowed,
              },
            }
          : {}),
        ...(options.history !== undefined && options.history.length > 0
          ? { history_messages: options.history.length }
          : {}),
      },
      resume,
      abilityLibrary: once(() =>
        // Relative only when no configuration file set it: then it is read from the working directory.
        loadAbilityLibrary(resolve(cwd, loaded.configuration.abilitiesDir)),
      ),
    };
    const maxDepth =
      context.overrides.maxDepth ?? agent.settings.maxDepth ?? loaded.configuration.defaults.maxDepth;
    const trace = rootDelegationTrace(agent.id, maxDepth ?? defaultMaxDelegationDepth);
    return await runLoadedAgent(
      context,
      agent,
      options.prompt,
      trace,
      runId,
      options.signal,
      true,
      options.parentRunId ?? null,
      selection,
    );
  } catch (error) {
    return preflightFailureResult(runId, error, environment.now(), redactor);
  } finally {
    await store?.close();
  }
}

/** A function that calls `load` the first time only, and returns that first promise ever after. */
function once<Value>(load: () => Promise<Value>): () => Promise<Value> {
  let loaded: Promise<Value> | null = null;
  return () => {
    loaded ??= load();
    return loaded;
  };
}
