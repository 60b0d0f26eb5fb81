import { createAnthropic } from "@ai-sdk/anthropic";
import type { ProviderAdapterInput } from "./model-connection.js";
import { type ProviderAdapter, standardCallOptions } from "./provider-adapter.js";
import { readAnthropicFailure } from "./read-anthropic-failure.js";

/**
 * Anthropic Messages. `reasoning` maps to extended thinking through the SDK (a budget or an effort,
 * depending on the model; `none` disables thinking); `reasoningTokens` sets the thinking budget itself.
 * Thinking blocks come back with their signatures, which Charter keeps and sends back unchanged.
 */
export function anthropicAdapter(input: ProviderAdapterInput): ProviderAdapter {
  const { connection } = input;
  const provider = createAnthropic({
    baseURL: connection.baseUrl,
    apiKey: connection.apiKey ?? "",
    headers: { ...connection.headers },
    ...(input.fetch === undefined ? {} : { fetch: input.fetch }),
  });
  return {
    toolResultMedia: { image: true, audio: false },
    languageModel: provider.messages(input.model),
    toCallOptions(parameters) {
      const options = standardCallOptions(parameters);
      if (parameters.reasoning_tokens !== null && parameters.reasoning !== "none") {
        options.providerOptions = {
          anthropic: { thinking: { type: "enabled", budgetTokens: parameters.reasoning_tokens } },
        };
      }
      return options;
    },
    readFailure: readAnthropicFailure,
  };
}
