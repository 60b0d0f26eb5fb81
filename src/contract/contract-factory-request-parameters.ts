import { contractDefaults } from "./contract-defaults.js";
import type { ContractDecider } from "./contract-factory-decider.js";
import type { ContractModelTargetInput, ModelParameterSettings } from "./contract-factory-input.js";
import type { RequestParameters } from "./execution-contract.js";

/** Each contract field with the setting key that sets it and its built-in default. */
const parameterFields: readonly (readonly [
  keyof RequestParameters,
  keyof ModelParameterSettings,
  unknown,
])[] = [
  ["temperature", "temperature", contractDefaults.temperature],
  ["top_p", "topP", contractDefaults.topP],
  ["top_k", "topK", contractDefaults.topK],
  ["max_output_tokens", "maxOutputTokens", contractDefaults.maxOutputTokens],
  ["frequency_penalty", "frequencyPenalty", contractDefaults.frequencyPenalty],
  ["presence_penalty", "presencePenalty", contractDefaults.presencePenalty],
  ["seed", "seed", contractDefaults.seed],
  ["stop_sequences", "stopSequences", contractDefaults.stopSequences],
  ["reasoning", "reasoning", contractDefaults.reasoning],
  ["reasoning_tokens", "reasoningTokens", contractDefaults.reasoningTokens],
];

/**
 * The request parameters one target receives, each through `decider.forTarget` (command line > the
 * target's per-model configuration > agent file > configuration defaults > built-in). The primary target's
 * decisions are recorded under the field names (`temperature`), the others' under
 * `model_targets.<index>.<field>`, so the contract says where every value sent to every target came from.
 */
export function resolveTargetRequestParameters(
  decide: ContractDecider,
  target: ContractModelTargetInput,
  index: number,
): RequestParameters {
  const modelParameters = target.parameters ?? {};
  const resolved: Record<string, unknown> = {};
  for (const [field, key, fallback] of parameterFields) {
    const { value, source } = decide.forTarget(key, fallback, modelParameters[key]);
    resolved[field] = value;
    decide.record(index === 0 ? field : `model_targets.${index}.${field}`, source);
  }
  return resolved as unknown as RequestParameters;
}

/**
 * The attempt bounds of one target (`modelTimeout`, `modelResponseMaxBytes`), decided like its request
 * parameters: command line > the target's provider or model configuration > agent file > configuration
 * `defaults` > built-in. Recorded as `model_timeout_ms` / `max_response_bytes` for the primary target and under
 * `model_targets.<index>.` for the others.
 */
export function resolveTargetAttemptBounds(
  decide: ContractDecider,
  target: ContractModelTargetInput,
  index: number,
): { model_timeout_ms: number; max_response_bytes: number } {
  const modelParameters = target.parameters ?? {};
  const prefix = index === 0 ? "" : `model_targets.${index}.`;
  const timeout = decide.forTarget(
    "modelTimeout",
    contractDefaults.modelTimeout,
    modelParameters.modelTimeout,
  );
  decide.record(`${prefix}model_timeout_ms`, timeout.source);
  const size = decide.forTarget(
    "modelResponseMaxBytes",
    contractDefaults.modelResponseMaxBytes,
    modelParameters.modelResponseMaxBytes,
  );
  decide.record(`${prefix}max_response_bytes`, size.source);
  return { model_timeout_ms: timeout.value, max_response_bytes: size.value };
}
