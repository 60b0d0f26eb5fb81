import type { ContractModelTargetInput, ModelParameterSettings } from "../contract/contract-factory-input.js";
import { CharterError } from "../foundation/charter-error.js";
import type { AgentSettings } from "./agent-settings-schema.js";
import type { Configuration, ProviderConfiguration } from "./configuration-schema.js";

/** A model target with everything the contract factory and the model client need. */
export interface ResolvedModelTarget extends ContractModelTargetInput {
  readonly provider: string;
  readonly model: string;
  readonly contextWindow?: number;
  readonly contextWindowBufferTokens?: number;
  readonly tokenizer: string | null;
  readonly parameters: ModelParameterSettings;
  /** How to reach the provider (not part of the contract: it holds the API key). */
  readonly connection: {
    readonly type: ProviderConfiguration["type"];
    /** For type "openai": Chat Completions or the Responses API. */
    readonly mode: ProviderConfiguration["mode"];
    readonly baseUrl: string;
    readonly apiKey: string | null;
    readonly headers: Readonly<Record<string, string>>;
  };
}

/**
 * The `models` list that applies: from `--set`, else the agent file, else the configuration `defaults`.
 * Lists replace each other whole; they are not merged.
 */
export function selectModelReferences(
  overrides: AgentSettings,
  agentSettings: AgentSettings,
  configurationDefaults: AgentSettings,
): readonly string[] {
  return overrides.models ?? agentSettings.models ?? configurationDefaults.models ?? [];
}

/**
 * Resolves `provider/model` references (split at the first `/`, so model names may contain slashes)
 * against the configuration, in order. Preflight's "every model target is configured": an unknown
 * provider or model is CONFIGURATION_INVALID naming the target.
 */
export function resolveModelTargets(
  models: readonly string[],
  configuration: Configuration,
): ResolvedModelTarget[] {
  if (models.length === 0) {
    throw new CharterError(
      "CONFIGURATION_INVALID",
      'No model targets: set "models" in the agent file, in the configuration defaults or with --set models=provider/model',
      { details: { key: "models" } },
    );
  }
  return models.map((target) => {
    const separator = target.indexOf("/");
    const providerName = separator > 0 ? target.slice(0, separator) : "";
    const modelName = separator > 0 ? target.slice(separator + 1) : "";
    if (providerName === "" || modelName === "") {
      throw new CharterError(
        "CONFIGURATION_INVALID",
        `Model target "${target}" is not of the form provider/model`,
        {
          details: { key: "models", target },
        },
      );
    }
    const provider = Object.hasOwn(configuration.providers, providerName)
      ? configuration.providers[providerName]
      : undefined;
    if (provider === undefined) {
      throw new CharterError(
        "CONFIGURATION_INVALID",
        `Model target "${target}": provider "${providerName}" is not configured (providers: ${Object.keys(configuration.providers).join(", ") || "none"})`,
        { details: { key: "models", target, provider: providerName } },
      );
    }
    const model = Object.hasOwn(provider.models, modelName) ? provider.models[modelName] : undefined;
    if (model === undefined) {
      throw new CharterError(
        "CONFIGURATION_INVALID",
        `Model target "${target}": model "${modelName}" is not configured under providers.${providerName}.models`,
        { details: { key: "models", target, provider: providerName, model: modelName } },
      );
    }
    // A setting on the model beats the same setting on its provider.
    const { contextWindow, contextWindowBufferTokens, tokenizer, ...parameters } = {
      ...provider.modelDefaults,
      ...model,
    };
    return {
      provider: providerName,
      model: modelName,
      ...(contextWindow === undefined ? {} : { contextWindow }),
      ...(contextWindowBufferTokens === undefined ? {} : { contextWindowBufferTokens }),
      tokenizer: tokenizer ?? null,
      parameters,
      connection: {
        type: provider.type,
        mode: provider.mode,
        baseUrl: provider.baseUrl,
        apiKey: provider.apiKey,
        headers: provider.headers,
      },
    };
  });
}
