import { createOpenAI } from "@ai-sdk/openai";
import type { ProviderAdapterInput } from "./model-connection.js";
import { type ProviderAdapter, standardCallOptions } from "./provider-adapter.js";
import { readOpenAIFailure } from "./read-openai-failure.js";

/**
 * OpenAI, over Chat Completions (`mode: "chat"`, the default) or the Responses API (`mode: "responses"`).
 * `reasoning` becomes `reasoning_effort` / `reasoning.effort`; OpenAI takes no reasoning budget, so
 * `reasoningTokens` is not sent. The Responses API is used statelessly (`store: false`): the transcript is
 * the record, every request carries the whole conversation, and reasoning comes back encrypted so that it
 * can be passed on without the server keeping it.
 */
export function openAIAdapter(input: ProviderAdapterInput): ProviderAdapter {
  const { connection } = input;
  const provider = createOpenAI({
    baseURL: connection.baseUrl,
    apiKey: connection.apiKey ?? "",
    headers: { ...connection.headers },
    ...(input.fetch === undefined ? {} : { fetch: input.fetch }),
  });
  if (connection.mode !== "responses") {
    return {
      languageModel: provider.chat(input.model),
      toCallOptions: standardCallOptions,
      readFailure: readOpenAIFailure,
    };
  }
  return {
    // The Responses API takes images in a function call's output; audio only as a file, which it refuses.
    toolResultMedia: { image: true, audio: false },
    languageModel: provider.responses(input.model),
    toCallOptions(parameters) {
      const options = standardCallOptions(parameters);
      const reasons = parameters.reasoning !== null && parameters.reasoning !== "none";
      options.providerOptions = {
        openai: { store: false, ...(reasons ? { include: ["reasoning.encrypted_content"] } : {}) },
      };
      return options;
    },
    readFailure: readOpenAIFailure,
  };
}
