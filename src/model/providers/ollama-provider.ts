import { createOllama } from "ollama-ai-provider-v2";
import type { RequestParameters } from "../../contract/execution-contract.js";
import type { ProviderAdapterInput } from "./model-connection.js";
import type { ParameterCallOptions, ProviderAdapter } from "./provider-adapter.js";
import { readOllamaFailure } from "./read-ollama-failure.js";

/**
 * Ollama's own chat API (`/api/chat`). Ollama reads sampling parameters only from its `options` object
 * (`num_predict` is the output limit), so they are sent there and not as top-level fields, which Ollama
 * would ignore. `reasoning` maps to Ollama's on/off `think` flag (`none` is off, any level on); Ollama has
 * no reasoning budget and no frequency or presence penalty, so those are not sent (the SDK reports them
 * as warnings). The package sends `think: false` when no reasoning is asked for, and drops error lines inside
 * a stream, so such a stream is seen as one that ended early.
 */
export function ollamaAdapter(input: ProviderAdapterInput): ProviderAdapter {
  const { connection } = input;
  const provider = createOllama({
    baseURL: connection.baseUrl,
    headers: {
      ...(connection.apiKey === null ? {} : { Authorization: `Bearer ${connection.apiKey}` }),
      ...connection.headers,
    },
    ...(input.fetch === undefined ? {} : { fetch: input.fetch }),
  });
  return {
    languageModel: provider.chat(input.model),
    toCallOptions: ollamaCallOptions,
    readFailure: readOllamaFailure,
    // The package reports a finish however the stream ended, and skips lines it cannot read (Ollama's
    // mid-answer `{"error": ...}` among them): only a last line with `done: true` is a complete answer.
    isStreamComplete: (rawChunks) => (rawChunks.at(-1) as { done?: unknown } | undefined)?.done === true,
  };
}

function ollamaCallOptions(parameters: RequestParameters): ParameterCallOptions {
  const ollamaOptions: Record<string, number | string[]> = {};
  if (parameters.temperature !== null) ollamaOptions.temperature = parameters.temperature;
  if (parameters.top_p !== null) ollamaOptions.top_p = parameters.top_p;
  if (parameters.top_k !== null) ollamaOptions.top_k = parameters.top_k;
  if (parameters.max_output_tokens !== null) ollamaOptions.num_predict = parameters.max_output_tokens;
  if (parameters.seed !== null) ollamaOptions.seed = parameters.seed;
  if (parameters.stop_sequences !== null) ollamaOptions.stop = [...parameters.stop_sequences];
  const options: ParameterCallOptions = {};
  if (parameters.frequency_penalty !== null) options.frequencyPenalty = parameters.frequency_penalty;
  if (parameters.presence_penalty !== null) options.presencePenalty = parameters.presence_penalty;
  if (parameters.reasoning !== null) options.reasoning = parameters.reasoning;
  if (Object.keys(ollamaOptions).length > 0) options.providerOptions = { ollama: { options: ollamaOptions } };
  return options;
}
