import type { FetchFunction } from "@ai-sdk/provider-utils";

/** The provider types Charter speaks (configuration `providers.<name>.type`). */
export type ProviderType = "openai" | "openai-compatible" | "anthropic" | "google" | "ollama" | "openrouter";

/** How to reach a provider; it holds the API key, so it never enters the contract or the transcript. */
export interface ModelConnection {
  readonly type: ProviderType;
  /** For type "openai": the Chat Completions API (`chat`, the default) or the Responses API. */
  readonly mode?: "chat" | "responses";
  readonly baseUrl: string;
  /**
   * Null means none: Charter never lets a provider package read its key from the process environment, so
   * what runs is what the configuration says.
   */
  readonly apiKey: string | null;
  readonly headers: Readonly<Record<string, string>>;
}

/** What a provider adapter is built from. */
export interface ProviderAdapterInput {
  /** The provider's name in configuration, as in `provider/model`. */
  readonly providerName: string;
  readonly model: string;
  readonly connection: ModelConnection;
  readonly fetch?: FetchFunction;
}
