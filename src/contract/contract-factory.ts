import { canonicalJson } from "../foundation/canonical-json.js";
import { deepFreeze } from "../foundation/deep-freeze.js";
import { agentSelectionDecisionKey } from "./agent-selection-record.js";
import { contractDefaults } from "./contract-defaults.js";
import { contractDecider } from "./contract-factory-decider.js";
import type { ContractAbilityInjection, ContractFactoryInput } from "./contract-factory-input.js";
import { contractInvalid } from "./contract-factory-invalid.js";
import {
  resolveTargetAttemptBounds,
  resolveTargetRequestParameters,
} from "./contract-factory-request-parameters.js";
import { sortedToolManifest } from "./contract-factory-tool-manifest.js";
import { computeContractHash } from "./contract-hash.js";
import {
  abilitiesContractSchemaVersion,
  type ContractAbilities,
  type ContractSchemaVersion,
  contractSchemaVersion,
  type ExecutionContract,
  type ExecutionContractContent,
  executionContractContentSchema,
} from "./execution-contract.js";
import { rememberVerifiedContract } from "./verified-contracts.js";

/** The `abilities` field of a version-4 contract, from the runner's plan. */
function contractAbilities(injection: ContractAbilityInjection): ContractAbilities {
  return {
    token_budget: injection.tokenBudget,
    tokens: injection.tokens,
    injected: injection.injected.map((ability) => ({
      id: ability.id,
      kind: ability.kind,
      content_hash: ability.contentHash,
      relevance: ability.relevance,
      tokens: ability.tokens,
      truncated: ability.truncated,
    })),
    left_out: injection.leftOut.map((ability) => ({
      id: ability.id,
      kind: ability.kind,
      content_hash: ability.contentHash,
      relevance: ability.relevance,
    })),
  };
}

/**
 * The schema version a contract is built as: today's (3, or 4 with abilities), or the earlier one a recorded run
 * asks for. Version 2 predates abilities; versions 3 and 4 differ only by them, so asking for the other one is a
 * contradiction, refused.
 */
function builtSchemaVersion(input: ContractFactoryInput): ContractSchemaVersion {
  const current = input.abilities === undefined ? contractSchemaVersion : abilitiesContractSchemaVersion;
  const requested = input.schemaVersion;
  if (requested === undefined || requested === current) return current;
  const reason =
    requested === 2
      ? "schema version 2 predates abilities: an agent that injects abilities cannot give a version-2 contract"
      : `schema version ${requested} ${requested === abilitiesContractSchemaVersion ? "records" : "has no"} abilities, and this agent injects ${input.abilities === undefined ? "none" : "some"}`;
  if (requested !== 2 || input.abilities !== undefined) {
    throw contractInvalid([{ path: "schema_version", message: reason }]);
  }
  return requested;
}

/** The most format retries a strict contract may allow (seed 002 §7.6: "bounded (<=1)"). */
export const strictMaxFormatRetries = 1;

/**
 * The contract creation boundary (seed 002 Phase 2b): turns the agent, the configuration, the command
 * line, the resolved model targets and the tool manifest into one validated, hashed, deeply frozen
 * `ExecutionContract`. Deterministic: the same inputs give the same `contract_hash`; only `contract_id`
 * and `created_at`, which the hash leaves out, come from the environment. Every decision records its
 * source in `decisions`, so the transcript can say why a limit has the value it has.
 */
export function buildExecutionContract(input: ContractFactoryInput): ExecutionContract {
  const primaryTarget = input.modelTargets[0];
  if (primaryTarget === undefined) {
    throw contractInvalid([{ path: "model_targets", message: "at least one model target is required" }]);
  }
  const decide = contractDecider(input);
  const schemaVersion = builtSchemaVersion(input);

  const layeredBuffer = decide.layered("contextWindowBufferTokens");
  const modelTargets = input.modelTargets.map((target, index) => ({
    provider: target.provider,
    model: target.model,
    context_window: target.contextWindow ?? contractDefaults.contextWindow,
    context_window_buffer_tokens:
      layeredBuffer?.value ?? target.contextWindowBufferTokens ?? contractDefaults.contextWindowBufferTokens,
    tokenizer: target.tokenizer ?? null,
    request_parameters: resolveTargetRequestParameters(decide, target, index),
    // Version 2 contracts had no attempt bounds: the session applies the defaults (session/perform-inference.ts).
    ...(schemaVersion === 2 ? {} : resolveTargetAttemptBounds(decide, target, index)),
  }));
  const primaryParameters = modelTargets[0]!.request_parameters;
  // `null` only means "do not send the parameter": the context guard still reserves room for an answer, as
  // large as the largest any target may give.
  const maxOutputTokens = Math.max(
    ...modelTargets.map(
      (target) => target.request_parameters.max_output_tokens ?? contractDefaults.maxOutputTokens,
    ),
  );
  // The budget must hold for every target the run may fall back to, so it takes the tightest of them.
  const contextWindow = Math.min(...modelTargets.map((target) => target.context_window));
  const contextWindowBuffer = Math.max(...modelTargets.map((target) => target.context_window_buffer_tokens));
  decide.record(
    "context_window",
    input.modelTargets.some((target) => target.contextWindow === contextWindow) ? "model" : "default",
  );
  decide.record(
    "context_window_buffer_tokens",
    layeredBuffer?.source ??
      (input.modelTargets.some((target) => target.contextWindowBufferTokens === contextWindowBuffer)
        ? "model"
        : "default"),
  );

  const output = decide("output", "output", contractDefaults.output);
  const modelProfileId =
    input.modelProfileId ??
    decide("model_profile_id", "modelProfile", `${primaryTarget.provider}/${primaryTarget.model}`);
  if (input.modelProfileId !== undefined) decide.record("model_profile_id", "input");

  if (input.agentSelection !== undefined)
    decide.note(agentSelectionDecisionKey, canonicalJson(input.agentSelection));

  const abilities = input.abilities;
  if (abilities !== undefined) {
    decide.record("ability_token_budget", abilities.tokenBudgetSource);
    if (abilities.cut !== null) decide.note("abilities_cut", abilities.cut);
  }
  const draft = {
    schema_version: schemaVersion,
    parent_contract_hash: input.parentContractHash,
    model_profile_id: modelProfileId,
    agent_id: input.agent.id,
    // Abilities come first (seed 003 INV-AGT-ABL-001): prepended, so the prompt the model sees is the one hashed.
    system_prompt:
      abilities === undefined || abilities.text === ""
        ? input.agent.systemPrompt
        : input.agent.systemPrompt === ""
          ? abilities.text
          : `${abilities.text}\n\n${input.agent.systemPrompt}`,
    tool_policy: decide("tool_policy", "toolPolicy", contractDefaults.toolPolicy),
    allowed_tools: decide("allowed_tools", "allowedTools", contractDefaults.allowedTools),
    strict_mode: decide("strict_mode", "strict", contractDefaults.strict),
    max_inferences: decide("max_inferences", "maxTurns", contractDefaults.maxTurns),
    max_tokens_consumed: decide(
      "max_tokens_consumed",
      "maxTokensConsumed",
      contractDefaults.maxTokensConsumed,
    ),
    max_format_retries: decide("max_format_retries", "maxFormatRetries", contractDefaults.maxFormatRetries),
    max_retries: decide("max_retries", "maxRetries", contractDefaults.maxRetries),
    max_tool_calls_per_turn: decide(
      "max_tool_calls_per_turn",
      "maxToolCallsPerTurn",
      contractDefaults.maxToolCallsPerTurn,
    ),
    step_timeout_ms: decide("step_timeout_ms", "stepTimeout", contractDefaults.stepTimeout),
    total_timeout_ms: decide("total_timeout_ms", "totalTimeout", contractDefaults.totalTimeout),
    tool_timeout_ms: decide("tool_timeout_ms", "toolTimeout", contractDefaults.toolTimeout),
    context_budget: {
      context_window: contextWindow,
      context_window_buffer_tokens: contextWindowBuffer,
      max_output_tokens: maxOutputTokens,
      reserved_system: decide(
        "reserved_system",
        "reservedSystemTokens",
        contractDefaults.reservedSystemTokens,
      ),
      reserved_synthesis: decide(
        "reserved_synthesis",
        "reservedSynthesisTokens",
        contractDefaults.reservedSynthesisTokens,
      ),
      force_synthesis_at_ratio: decide(
        "force_synthesis_at_ratio",
        "forceSynthesisAtRatio",
        contractDefaults.forceSynthesisAtRatio,
      ),
    },
    tool_output_budget: {
      max_bytes_per_call: decide(
        "max_bytes_per_call",
        "toolResponseMaxBytes",
        contractDefaults.toolResponseMaxBytes,
      ),
      truncation_marker: contractDefaults.truncationMarker,
      summarizer_model: contractDefaults.summarizerModel,
    },
    adapter_version: input.adapterVersion,
    grammar_profile: contractDefaults.grammarProfile,
    grammar: null,
    logits_mask: null,
    token_gate: decide("token_gate", "tokenGate", contractDefaults.tokenGate),
    speculative_exec: contractDefaults.speculativeExec,
    cycle_forbid: decide("cycle_forbid", "cycleForbid", contractDefaults.cycleForbid),
    model_targets: modelTargets,
    request_parameters: primaryParameters,
    stream: decide("stream", "stream", contractDefaults.stream),
    output: { format: output.format, schema: output.schema ?? null },
    tool_manifest: sortedToolManifest(input.toolManifest),
    decisions: decide.decisions,
    ...(abilities === undefined ? {} : { abilities: contractAbilities(abilities) }),
  };

  // Strict mode bounds the retry ladder at one format retry (seed 002 §7.6): a contract asking for more is
  // refused rather than silently capped.
  if (draft.strict_mode && draft.max_format_retries > strictMaxFormatRetries) {
    throw contractInvalid([
      {
        path: "max_format_retries",
        message: `strict mode allows at most ${strictMaxFormatRetries} format retry (got ${draft.max_format_retries}, from ${decide.decisions.max_format_retries}): lower maxFormatRetries or turn strict off`,
      },
    ]);
  }

  // A private copy: freezing the contract must not freeze (or alias) objects the caller still holds.
  const parsed = executionContractContentSchema.safeParse(structuredClone(draft));
  if (!parsed.success) {
    throw contractInvalid(
      parsed.error.issues.map((issue) => ({
        path: issue.path.map(String).join("."),
        message: issue.message,
      })),
    );
  }
  const content: ExecutionContractContent = parsed.data;
  const contract: ExecutionContract = deepFreeze({
    contract_id: input.environment.newId("contract"),
    contract_hash: computeContractHash(content),
    created_at: new Date(input.environment.now()).toISOString(),
    ...content,
  });
  rememberVerifiedContract(contract);
  return contract;
}
