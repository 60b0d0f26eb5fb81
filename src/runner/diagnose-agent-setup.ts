import { homedir } from "node:os";
import { resolve } from "node:path";
import { loadAbilityLibrary } from "../abilities/load-ability-library.js";
import { resolveAgentAbilities } from "../abilities/resolve-agent-abilities.js";
import type { AgentDefinition } from "../config/agent-file.js";
import type { LoadedConfiguration } from "../config/load-configuration.js";
import {
  type ResolvedModelTarget,
  resolveModelTargets,
  selectModelReferences,
} from "../config/resolve-model-targets.js";
import { userMessage } from "../contract/agent-message.js";
import { CharterError } from "../foundation/charter-error.js";
import { systemEnvironment } from "../foundation/environment.js";
import type { ErrorCode } from "../foundation/error-codes.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import type { ModelCallError } from "../model/model-call-error.js";
import { createModelClient } from "../model/providers/create-model-client.js";
import type { AgentSetupOptions } from "./agent-setup-options.js";
import { toolReferencesOf } from "./list-agent-tools.js";
import { loadSetupAgent, loadSetupConfiguration } from "./load-agent-setup.js";
import { startToolSources } from "./start-tool-sources.js";

/** One thing `charter doctor` checked: what works, or what does not and how to fix it. */
export interface SetupCheck {
  /** `configuration`, `agent`, `model local/m`, `tool server test`, `tools`, `endpoint local/m`. */
  readonly check: string;
  readonly ok: boolean;
  /** What was found: the layers read, the tools a server offers, the model's answer; or the error. */
  readonly detail: string;
  /** For a failure: what to do about it. */
  readonly fix?: string;
  /** For a failure: the typed error code. */
  readonly code?: ErrorCode;
}

/** How long one endpoint gets to answer the one tiny request (a real model can be slow to load). */
const endpointTimeoutMs = 60_000;

/**
 * Everything a run needs, checked in the order a run needs it, without running the agent: the configuration
 * layers, the agent file, every model target, every tool server (started as a run starts them, then closed), the
 * tools list against what the servers offer, and one tiny request to each model endpoint. Never throws: each
 * problem is a failed check with its fix. A configuration or agent that does not load stops the checks there,
 * since nothing after it can be resolved.
 */
export async function diagnoseAgentSetup(options: AgentSetupOptions): Promise<SetupCheck[]> {
  const checks: SetupCheck[] = [];
  const redactor = new SecretRedactor();
  let loaded: LoadedConfiguration;
  try {
    loaded = await loadSetupConfiguration({ ...options, homeDirectory: options.homeDirectory ?? homedir() });
    const present = loaded.layers.filter((layer) => layer.present).map((layer) => layer.path);
    checks.push({
      check: "configuration",
      ok: true,
      detail:
        present.length === 0 ? "no configuration file found (defaults only)" : `read ${present.join(", ")}`,
    });
  } catch (error) {
    checks.push(failure("configuration", error, fixForInvalidFile(error)));
    return checks;
  }
  let agent: AgentDefinition | null = null;
  if (options.agentPath !== undefined) {
    try {
      const found = await loadSetupAgent(options, loaded);
      agent = found.agent;
      loaded = found.loaded;
      checks.push({
        check: "agent",
        ok: true,
        detail:
          agent?.builtIn === true ? `built-in agent ${agent.id}` : `${agent?.path} (agent ${agent?.id})`,
      });
    } catch (error) {
      checks.push(failure("agent", error, fixForInvalidFile(error)));
      return checks;
    }
  }
  for (const secret of loaded.secrets) redactor.addSecret(secret.value, secret.label);
  const configuration = loaded.configuration;

  // Abilities: every id the agent names must be in the abilities folder, and the folder must be valid.
  if (agent !== null) {
    try {
      const abilities = await resolveAgentAbilities({
        agentFile: agent.path,
        layers: { overrides: {}, agent: agent.settings, defaults: configuration.defaults },
        loadLibrary: () =>
          loadAbilityLibrary(resolve(options.cwd ?? process.cwd(), configuration.abilitiesDir)),
      });
      if (abilities !== null) {
        const ids = (list: readonly { id: string }[]) =>
          list.length === 0 ? "none" : list.map((ability) => ability.id).join(", ");
        checks.push({
          check: "abilities",
          ok: true,
          detail: `core: ${ids(abilities.core)}; when the task matches: ${ids(abilities.candidates)}; budget ${abilities.tokenBudget} tokens`,
        });
      }
    } catch (error) {
      checks.push(failure("abilities", error, fixForAbility(error)));
    }
  }

  // Model targets: the agent's (else the defaults'); with neither, every configured model.
  const references =
    agent !== null || configuration.defaults.models !== undefined
      ? selectModelReferences({}, agent?.settings ?? {}, configuration.defaults)
      : Object.entries(configuration.providers).flatMap(([provider, definition]) =>
          Object.keys(definition.models).map((model) => `${provider}/${model}`),
        );
  const targets: ResolvedModelTarget[] = [];
  if (references.length === 0) {
    checks.push({
      check: "models",
      ok: false,
      detail:
        "no model targets: the agent names none, the configuration defaults name none and no provider is configured",
      fix: 'add a provider under "providers" in .charter.json and name it in the agent file\'s models list (models: [provider/model])',
      code: "CONFIGURATION_INVALID",
    });
  }
  for (const reference of references) {
    try {
      const [target] = resolveModelTargets([reference], configuration);
      targets.push(target!);
      checks.push({
        check: `model ${reference}`,
        ok: true,
        detail: `${target!.connection.type} at ${target!.connection.baseUrl}`,
      });
    } catch (error) {
      checks.push(
        failure(
          `model ${reference}`,
          error,
          `add provider '${reference.split("/")[0]}' with model '${reference.slice(reference.indexOf("/") + 1)}' under "providers" in .charter.json, or correct the reference`,
        ),
      );
    }
  }

  // Tool servers: each started on its own, so that one that fails does not hide the others.
  const toolReferences = agent !== null ? toolReferencesOf(agent, configuration.defaults) : null;
  const servers = Object.keys(configuration.mcpServers).filter(
    (server) =>
      toolReferences === null ||
      toolReferences.some((reference) => reference === server || reference.startsWith(`${server}__`)),
  );
  const offered = new Set<string>();
  for (const server of servers) {
    try {
      const started = await startToolSources([server], configuration, {
        cwd: options.cwd ?? process.cwd(),
        environment: options.environment ?? systemEnvironment,
      });
      for (const tool of started.tools) offered.add(tool.manifest.name);
      await Promise.allSettled(started.sources.map((source) => source.close()));
      checks.push({
        check: `tool server ${server}`,
        ok: true,
        detail: `started; offers ${started.tools.length} tools`,
      });
    } catch (error) {
      checks.push(
        failure(
          `tool server ${server}`,
          error,
          `check mcpServers.${server} in the configuration (command, args, url, env) and that the server starts on its own`,
        ),
      );
    }
  }
  // REST tools: their definitions are checked when their source starts (no process, no request).
  const restReferences = Object.keys(configuration.restTools)
    .map((name) => `rest__${name}`)
    .filter(
      (reference) =>
        toolReferences === null ||
        toolReferences.includes(reference) ||
        toolReferences.includes(reference.slice("rest__".length)),
    );
  if (restReferences.length > 0) {
    try {
      const started = await startToolSources(restReferences, configuration, {
        cwd: options.cwd ?? process.cwd(),
        environment: options.environment ?? systemEnvironment,
      });
      for (const tool of started.tools) offered.add(tool.manifest.name);
      await Promise.allSettled(started.sources.map((source) => source.close()));
      checks.push({ check: "REST tools", ok: true, detail: `${started.tools.length} defined correctly` });
    } catch (error) {
      checks.push(failure("REST tools", error, "correct the REST tool named in the error under restTools"));
    }
  }
  if (toolReferences !== null) {
    const restTools = configuration.restTools;
    const unknown = toolReferences.filter((reference) => {
      if (Object.hasOwn(configuration.mcpServers, reference)) return false;
      if (Object.hasOwn(restTools, reference.replace(/^rest__/, ""))) return false;
      const server = reference.slice(0, Math.max(0, reference.indexOf("__")));
      // A server that failed to start is reported above; its tools cannot be checked.
      if (
        server !== "" &&
        servers.includes(server) &&
        !checks.some((check) => check.check === `tool server ${server}` && check.ok)
      )
        return false;
      return !offered.has(reference);
    });
    checks.push(
      unknown.length === 0
        ? {
            check: "tools",
            ok: true,
            detail: `every entry of the tools list names a tool (${toolReferences.length} entries)`,
          }
        : {
            check: "tools",
            ok: false,
            detail: `no configured server or REST tool offers ${unknown.map((name) => `'${name}'`).join(", ")}`,
            fix: "correct the tools list in the agent file: `charter tools` lists every tool the configured servers offer",
            code: "TOOL_REFERENCE_UNKNOWN",
          },
    );
  }

  // One tiny request per endpoint: does it answer, with this key, for this model?
  for (const target of targets) {
    const client = createModelClient(target, {
      environment: options.environment ?? systemEnvironment,
      timeoutMs: endpointTimeoutMs,
    });
    try {
      const response = await client.generate({
        messages: [userMessage("Reply with the word ok.")],
        tools: [],
        toolChoice: "none",
        parameters: {
          temperature: null,
          top_p: null,
          top_k: null,
          max_output_tokens: 16,
          frequency_penalty: null,
          presence_penalty: null,
          seed: null,
          stop_sequences: null,
          reasoning: null,
          reasoning_tokens: null,
        },
      });
      checks.push({
        check: `endpoint ${target.provider}/${target.model}`,
        ok: true,
        detail: `answered (${response.usage === null ? "no usage reported" : `${response.usage.inputTokens} tokens in, ${response.usage.outputTokens} out`})`,
      });
    } catch (error) {
      checks.push(
        failure(`endpoint ${target.provider}/${target.model}`, error, fixForModelError(error, target)),
      );
    }
  }
  return checks.map((check) => redactCheck(check, redactor));
}

function failure(check: string, error: unknown, fix: string): SetupCheck {
  const code = CharterError.isInstance(error) ? error.code : "INTERNAL_ERROR";
  const message = error instanceof Error ? error.message : String(error);
  return { check, ok: false, detail: message, fix, code };
}

function fixForInvalidFile(error: unknown): string {
  if (!CharterError.isInstance(error)) return "see the error above";
  const { file, key, suggestion, variable } = error.details as Record<string, unknown>;
  if (error.code === "ENVIRONMENT_VARIABLE_UNRESOLVED")
    return `set ${typeof variable === "string" ? variable : "the variable"} in the environment or in .charter.env beside the configuration file`;
  if (error.code === "AGENT_NOT_FOUND")
    return typeof suggestion === "string"
      ? `use the agent id ${suggestion}`
      : "charter agents list shows the agents of the registry; a file path needs a '/' or its extension";
  if (error.code === "AGENT_DISABLED")
    return `set enabled: true in ${String(file)}, or run the file by its path`;
  if (typeof suggestion === "string" && typeof key === "string")
    return `in ${String(file)}, rename ${key} to ${suggestion}`;
  if (typeof key === "string" && key !== "") return `in ${String(file)}, correct ${key}`;
  return `correct ${String(file ?? "the file")}`;
}

function fixForAbility(error: unknown): string {
  if (!CharterError.isInstance(error)) return "see the error above";
  const { file, key, id, suggestion, directory } = error.details as Record<string, unknown>;
  if (error.code === "ABILITY_UNKNOWN") {
    return typeof suggestion === "string"
      ? `in ${String(file)}, change "${String(id)}" in ${String(key)} to "${suggestion}"`
      : `add an ability with id "${String(id)}" to ${String(directory)}, or remove it from ${String(key)} in ${String(file)} (abilitiesDir in the configuration names the folder)`;
  }
  if (error.code === "ABILITY_DUPLICATE") return "give one of the two files another id";
  return fixForInvalidFile(error);
}

function fixForModelError(error: unknown, target: ResolvedModelTarget): string {
  const errorClass = (error as Partial<ModelCallError>).errorClass;
  const provider = `providers.${target.provider}`;
  switch (errorClass) {
    case "auth":
      return `the endpoint refused the API key: check ${provider}.apiKey (for example \${VARIABLE} with the key in .charter.env)`;
    case "quota":
      return "the account has no quota left: check its billing or use another target";
    case "rate_limit":
      return "the endpoint is rate limiting: try again later, or lower the request rate";
    case "network":
    case "timeout":
      return `nothing answered at ${target.connection.baseUrl}: start the server, or correct ${provider}.baseUrl`;
    case "bad_request":
      return `the endpoint refused the request: check that model '${target.model}' exists there and ${provider}.type fits the endpoint`;
    case "server":
      return "the endpoint failed with a server error: check its logs, or try again";
    default:
      return `check ${provider} in the configuration`;
  }
}

function redactCheck(check: SetupCheck, redactor: SecretRedactor): SetupCheck {
  return {
    ...check,
    detail: redactor.redactString(check.detail),
    ...(check.fix !== undefined ? { fix: redactor.redactString(check.fix) } : {}),
  };
}
