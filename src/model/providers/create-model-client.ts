import type { FetchFunction } from "@ai-sdk/provider-utils";
import { type RuntimeEnvironment, systemEnvironment } from "../../foundation/environment.js";
import type { ModelClient } from "../model-client.js";
import { anthropicAdapter } from "./anthropic-provider.js";
import { googleAdapter } from "./google-provider.js";
import { createLanguageModelClient } from "./language-model-client.js";
import type { ModelConnection, ProviderAdapterInput } from "./model-connection.js";
import { ollamaAdapter } from "./ollama-provider.js";
import { openAICompatibleAdapter } from "./openai-compatible-provider.js";
import { openAIAdapter } from "./openai-provider.js";
import { openRouterAdapter } from "./openrouter-provider.js";
import type { ProviderAdapter } from "./provider-adapter.js";

/** A configured `provider/model` target: `ResolvedModelTarget` from the configuration has this shape. */
export interface ModelClientTarget {
  readonly provider: string;
  readonly model: string;
  readonly connection: ModelConnection;
}

export interface ModelClientOptions {
  /** The clock used for Retry-After dates and rate-limit reset times; defaults to the system environment. */
  readonly environment?: RuntimeEnvironment;
  /** Client-side timeout of one call (streaming included); defaults to five minutes. */
  readonly timeoutMs?: number;
  /** Replaces the global fetch (for example to route through a proxy in tests). */
  readonly fetch?: FetchFunction;
}

const defaultTimeoutMs = 300_000;

const adapters: Readonly<Record<ModelConnection["type"], (input: ProviderAdapterInput) => ProviderAdapter>> =
  {
    openai: openAIAdapter,
    "openai-compatible": openAICompatibleAdapter,
    anthropic: anthropicAdapter,
    google: googleAdapter,
    ollama: ollamaAdapter,
    openrouter: openRouterAdapter,
  };

/**
 * The model client of one target, whatever its provider type: each speaks its provider's wire format
 * through the provider's AI SDK package, and all return the same `ModelResponse` and reject with the same
 * classified `ModelCallError`, so every guarantee of the session holds for each.
 */
export function createModelClient(target: ModelClientTarget, options: ModelClientOptions = {}): ModelClient {
  const adapter = adapters[target.connection.type]({
    providerName: target.provider,
    model: target.model,
    connection: target.connection,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  return createLanguageModelClient({
    provider: target.provider,
    model: target.model,
    adapter,
    environment: options.environment ?? systemEnvironment,
    timeoutMs: options.timeoutMs ?? defaultTimeoutMs,
  });
}
