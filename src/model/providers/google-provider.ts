import { createGoogleGenerativeAI } from "@ai-sdk/google";
import type { ProviderAdapterInput } from "./model-connection.js";
import { type ProviderAdapter, standardCallOptions } from "./provider-adapter.js";
import { readGoogleFailure } from "./read-google-failure.js";

/**
 * Google Gemini (the Generative Language API). `reasoning` maps to `thinkingConfig` through the SDK (a
 * thinking level or budget, depending on the model; `none` turns thinking off where the model allows);
 * `reasoningTokens` sets `thinkingBudget`. When the model is asked to reason, its thoughts are requested
 * too (`includeThoughts`), and their thought signatures are kept and sent back.
 */
export function googleAdapter(input: ProviderAdapterInput): ProviderAdapter {
  const { connection } = input;
  const provider = createGoogleGenerativeAI({
    baseURL: connection.baseUrl,
    apiKey: connection.apiKey ?? "",
    headers: { ...connection.headers },
    ...(input.fetch === undefined ? {} : { fetch: input.fetch }),
  });
  return {
    toolResultMedia: { image: true, audio: true },
    languageModel: provider.languageModel(input.model),
    toCallOptions(parameters) {
      const options = standardCallOptions(parameters);
      const thinks =
        (parameters.reasoning !== null && parameters.reasoning !== "none") ||
        (parameters.reasoning === null && parameters.reasoning_tokens !== null);
      if (thinks) {
        options.providerOptions = {
          google: {
            thinkingConfig: {
              includeThoughts: true,
              ...(parameters.reasoning_tokens === null
                ? {}
                : { thinkingBudget: parameters.reasoning_tokens }),
            },
          },
        };
      }
      return options;
    },
    readFailure: readGoogleFailure,
  };
}
