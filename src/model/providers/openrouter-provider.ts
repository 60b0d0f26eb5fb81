import { createOpenRouter } from "@openrouter/ai-sdk-provider";
import type { ProviderAdapterInput } from "./model-connection.js";
import { type ProviderAdapter, standardCallOptions } from "./provider-adapter.js";
import { readOpenRouterFailure } from "./read-openrouter-failure.js";

/**
 * OpenRouter (Chat Completions with OpenRouter's extensions). Its SDK takes reasoning only as the
 * `reasoning` request field: `{ max_tokens }` when `reasoningTokens` is set, else `{ effort }` from
 * `reasoning`. Reasoning details (with their signatures) are kept and sent back.
 */
export function openRouterAdapter(input: ProviderAdapterInput): ProviderAdapter {
  const { connection } = input;
  const provider = createOpenRouter({
    baseURL: connection.baseUrl,
    apiKey: connection.apiKey ?? "",
    headers: { ...connection.headers },
    // Strict compatibility asks for usage in streamed answers as well.
    compatibility: "strict",
    ...(input.fetch === undefined ? {} : { fetch: input.fetch }),
  });
  return {
    languageModel: provider.chat(input.model),
    toCallOptions(parameters) {
      const { reasoning: _sentBelow, ...options } = standardCallOptions(parameters);
      const reasoning =
        parameters.reasoning_tokens !== null && parameters.reasoning !== "none"
          ? { max_tokens: parameters.reasoning_tokens }
          : parameters.reasoning !== null
            ? { effort: parameters.reasoning }
            : null;
      if (reasoning !== null) options.providerOptions = { openrouter: { reasoning } };
      return options;
    },
    readFailure: readOpenRouterFailure,
  };
}
