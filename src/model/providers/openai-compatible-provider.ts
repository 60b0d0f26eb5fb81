import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { ProviderAdapterInput } from "./model-connection.js";
import { type ProviderAdapter, standardCallOptions } from "./provider-adapter.js";
import { readOpenAIFailure } from "./read-openai-failure.js";
import { RequestBodyCapture } from "./request-body-capture.js";

/**
 * Any server that speaks OpenAI Chat Completions (vLLM, llama.cpp, LM Studio, LiteLLM, ...). The SDK does
 * not send `top_k` on this provider, so it travels as a provider option, which the SDK copies into the
 * request body as is; `reasoning` is sent as `reasoning_effort`. The request body reaches the transcript as
 * the object the package serialised (see RequestBodyCapture), not parsed back from its text.
 */
export function openAICompatibleAdapter(input: ProviderAdapterInput): ProviderAdapter {
  const { connection } = input;
  const requestBodies = new RequestBodyCapture();
  const provider = createOpenAICompatible({
    name: input.providerName,
    baseURL: connection.baseUrl,
    // Servers without authentication get no Authorization header at all.
    ...(connection.apiKey === null ? {} : { apiKey: connection.apiKey }),
    headers: { ...connection.headers },
    includeUsage: true,
    transformRequestBody: requestBodies.record,
    ...(input.fetch === undefined ? {} : { fetch: input.fetch }),
  });
  // The SDK reads provider options under the part of the provider name before the first dot.
  const optionsKey = input.providerName.split(".")[0]!.trim();
  return {
    languageModel: requestBodies.languageModel(provider.chatModel(input.model)),
    toCallOptions(parameters) {
      const { topK: _sentBelow, ...options } = standardCallOptions(parameters);
      if (parameters.top_k !== null) options.providerOptions = { [optionsKey]: { top_k: parameters.top_k } };
      return options;
    },
    readFailure: readOpenAIFailure,
  };
}
