import type { FetchFunction } from "@ai-sdk/provider-utils";
import { type RuntimeEnvironment, systemEnvironment } from "../../foundation/environment.js";
import type { ModelClient } from "../model-client.js";
import { createLanguageModelClient } from "./language-model-client.js";
import type { ModelConnection, ProviderAdapterInput } from "./model-connection.js";
import type { ProviderAdapter } from "./provider-adapter.js";
import { limitResponseSize } from "./response-size-limit.js";

/** A configured `provider/model` target: `ResolvedModelTarget` from the configuration has this shape. */
export interface ModelClientTarget {
  readonly provider: string;
  readonly model: string;
  readonly connection: ModelConnection;
}

export interface ModelClientOptions {
  /** The clock used for Retry-After dates and rate-limit reset times; defaults to the system environment. */
  readonly environment?: RuntimeEnvironment;
  /** Client-side timeout of a call whose request sets none (streaming included); defaults to five minutes. */
  readonly timeoutMs?: number;
  /** Replaces the global fetch (for example to route through a proxy in tests). */
  readonly fetch?: FetchFunction;
}

const defaultTimeoutMs = 300_000;

type AdapterFactory = (input: ProviderAdapterInput) => ProviderAdapter;

// Each provider's AI SDK package is loaded when a client of that provider type makes its first call, not when
// Charter starts: a run against one provider never loads the other five, and commands that call no model
// (`--version`, `verify`, `runs list`) load none.
const adapterLoaders: Readonly<Record<ModelConnection["type"], () => Promise<AdapterFactory>>> = {
  openai: async () => (await import("./openai-provider.js")).openAIAdapter,
  "openai-compatible": async () => (await import("./openai-compatible-provider.js")).openAICompatibleAdapter,
  anthropic: async () => (await import("./anthropic-provider.js")).anthropicAdapter,
  google: async () => (await import("./google-provider.js")).googleAdapter,
  ollama: async () => (await import("./ollama-provider.js")).ollamaAdapter,
  openrouter: async () => (await import("./openrouter-provider.js")).openRouterAdapter,
};

/**
 * The model client of one target, whatever its provider type: each speaks its provider's wire format
 * through the provider's AI SDK package, and all return the same `ModelResponse` and reject with the same
 * classified `ModelCallError`, so every guarantee of the session holds for each.
 */
export function createModelClient(target: ModelClientTarget, options: ModelClientOptions = {}): ModelClient {
  const input: ProviderAdapterInput = {
    providerName: target.provider,
    model: target.model,
    connection: target.connection,
    // Every call goes through the size limit of the request it serves (ModelRequest.maxResponseBytes).
    fetch: limitResponseSize(options.fetch ?? ((input, init) => globalThis.fetch(input, init))),
  };
  let adapter: Promise<ProviderAdapter> | undefined;
  return createLanguageModelClient({
    provider: target.provider,
    model: target.model,
    loadAdapter: () => {
      adapter ??= adapterLoaders[target.connection.type]().then((create) => create(input));
      return adapter;
    },
    environment: options.environment ?? systemEnvironment,
    timeoutMs: options.timeoutMs ?? defaultTimeoutMs,
  });
}
