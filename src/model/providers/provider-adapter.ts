import type { LanguageModelV4, LanguageModelV4CallOptions } from "@ai-sdk/provider";
import type { RequestParameters } from "../../contract/execution-contract.js";
import type { ProviderFailureReader } from "../provider-failure.js";

/** The call options a provider adapter fills in: sampling, reasoning and provider-specific options. */
export type ParameterCallOptions = Pick<
  LanguageModelV4CallOptions,
  | "temperature"
  | "topP"
  | "topK"
  | "maxOutputTokens"
  | "frequencyPenalty"
  | "presencePenalty"
  | "seed"
  | "stopSequences"
  | "reasoning"
  | "providerOptions"
>;

/**
 * One provider type behind Charter's model client: the AI SDK language model that speaks its wire
 * format, how Charter's request parameters map onto that provider's options (each exactly when it is not
 * null), and how its error bodies and headers are read.
 */
export interface ProviderAdapter {
  readonly languageModel: LanguageModelV4;
  toCallOptions(parameters: RequestParameters): ParameterCallOptions;
  readonly readFailure?: ProviderFailureReader;
  /**
   * Whether a stream that ended was complete, judged from its raw chunks, for providers whose package
   * reports a finish even when the provider's own end marker never came.
   */
  readonly isStreamComplete?: (rawChunks: readonly unknown[]) => boolean;
  /**
   * Which tool-result attachments the provider's API accepts as content parts (the AI SDK's tool-result `content`
   * output with `file` parts). Absent: none; attachments then reach the model as their text description only.
   */
  readonly toolResultMedia?: ToolResultMedia;
}

/** The kinds of tool-result attachment a provider accepts beside text. */
export interface ToolResultMedia {
  readonly image: boolean;
  readonly audio: boolean;
}

/**
 * The AI SDK's standard call options, each set exactly when the parameter is not null, so that a null
 * parameter leaves the provider's own default in force (seed 000 §10, "config ignored").
 */
export function standardCallOptions(parameters: RequestParameters): ParameterCallOptions {
  const options: ParameterCallOptions = {};
  if (parameters.temperature !== null) options.temperature = parameters.temperature;
  if (parameters.top_p !== null) options.topP = parameters.top_p;
  if (parameters.top_k !== null) options.topK = parameters.top_k;
  if (parameters.max_output_tokens !== null) options.maxOutputTokens = parameters.max_output_tokens;
  if (parameters.frequency_penalty !== null) options.frequencyPenalty = parameters.frequency_penalty;
  if (parameters.presence_penalty !== null) options.presencePenalty = parameters.presence_penalty;
  if (parameters.seed !== null) options.seed = parameters.seed;
  if (parameters.stop_sequences !== null) options.stopSequences = [...parameters.stop_sequences];
  if (parameters.reasoning !== null) options.reasoning = parameters.reasoning;
  return options;
}
