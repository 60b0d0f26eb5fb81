import { z } from "zod";

/**
 * The execution contract (seed 002 §4.1) with the seed-000 limits mapped onto it, one mechanism each:
 * `max_inferences` is the turn limit (`maxTurns`), `max_retries` the attempts per turn, and so on.
 * Built once by the contract factory, hashed, deeply frozen, never mutated after the first inference.
 */
export const contractSchemaVersion = 3;

/**
 * The version of a contract whose agent names abilities: version 3 plus the `abilities` field (what was injected
 * into the system prompt, and the budget). A contract without abilities is still built as version 3, unchanged, so
 * a run recorded before abilities existed rebuilds to the same hash and resumes.
 */
export const abilitiesContractSchemaVersion = 4;

/**
 * Contract versions a recorded run may carry. A version-2 contract keeps the session rules it was recorded
 * under (see session/session-rules.ts), so that old runs still verify, resume and replay.
 */
export const supportedContractSchemaVersions = [2, 3, 4] as const;
export type ContractSchemaVersion = (typeof supportedContractSchemaVersions)[number];

export const toolPolicySchema = z.enum(["required", "optional", "forbidden"]);
export type ToolPolicy = z.infer<typeof toolPolicySchema>;

export const outputFormatSchema = z.enum(["text", "markdown", "json"]);
export type OutputFormat = z.infer<typeof outputFormatSchema>;

const positiveInteger = z.number().int().positive();
const nonNegativeInteger = z.number().int().nonnegative();

/** How much the model should reason; each provider maps it onto its own option. */
export const reasoningLevelSchema = z.enum(["none", "minimal", "low", "medium", "high"]);
export type ReasoningLevel = z.infer<typeof reasoningLevelSchema>;

/**
 * Sampling and reasoning parameters sent to the provider exactly; `null` means "do not send".
 * `reasoning_tokens` is a reasoning budget for the providers that take one.
 */
export const requestParametersSchema = z
  .object({
    temperature: z.number().nullable(),
    top_p: z.number().nullable(),
    top_k: z.number().int().nullable(),
    max_output_tokens: positiveInteger.nullable(),
    frequency_penalty: z.number().nullable(),
    presence_penalty: z.number().nullable(),
    seed: z.number().int().nullable(),
    stop_sequences: z.array(z.string()).nullable(),
    reasoning: reasoningLevelSchema.nullable(),
    reasoning_tokens: positiveInteger.nullable(),
  })
  .strict();
export type RequestParameters = z.infer<typeof requestParametersSchema>;

export const modelTargetSchema = z
  .object({
    provider: z.string().min(1),
    model: z.string().min(1),
    context_window: positiveInteger,
    context_window_buffer_tokens: nonNegativeInteger,
    tokenizer: z.string().nullable(),
    /** The parameters sent to this target: per-model configuration beats the agent file (see the factory). */
    request_parameters: requestParametersSchema,
    /**
     * How long one attempt may take before it fails as a timeout, and the largest response body accepted
     * from this target (schema version 3; absent in version-2 contracts, which used the client's defaults).
     */
    model_timeout_ms: positiveInteger.optional(),
    max_response_bytes: positiveInteger.optional(),
  })
  .strict();
export type ModelTarget = z.infer<typeof modelTargetSchema>;

export const toolManifestEntrySchema = z
  .object({
    name: z.string().min(1),
    description: z.string(),
    input_schema: z.record(z.string(), z.unknown()),
    source: z
      .object({
        kind: z.enum(["builtin", "mcp", "function"]),
        server: z.string().nullable(),
        tool: z.string(),
      })
      .strict(),
    annotations: z.record(z.string(), z.unknown()).nullable(),
  })
  .strict();
export type ToolManifestEntry = z.infer<typeof toolManifestEntrySchema>;

const injectedAbilityShape = {
  id: z.string().min(1),
  kind: z.enum(["core", "matched"]),
  /** BLAKE3 of the ability's whole knowledge text. */
  content_hash: z.string().regex(/^[0-9a-f]{64}$/),
  /** The keyword relevance that selected a matched ability; null for a core one. */
  relevance: nonNegativeInteger.nullable(),
};

/** What was injected into the system prompt (schema version 4): each ability's id and content hash, in order. */
export const contractAbilitiesSchema = z
  .object({
    token_budget: positiveInteger,
    /** Tokens of the injected text (the system prompt before the agent's own), never above the budget. */
    tokens: nonNegativeInteger,
    injected: z.array(
      z.object({ ...injectedAbilityShape, tokens: nonNegativeInteger, truncated: z.boolean() }).strict(),
    ),
    /** Abilities that did not fit at all, in priority order. */
    left_out: z.array(z.object(injectedAbilityShape).strict()),
  })
  .strict();
export type ContractAbilities = z.infer<typeof contractAbilitiesSchema>;

const contentObjectSchema = z
  .object({
    schema_version: z.union([z.literal(2), z.literal(3), z.literal(4)]),
    parent_contract_hash: z.string().nullable(),
    model_profile_id: z.string().min(1),
    agent_id: z.string().min(1),
    system_prompt: z.string(),

    // policy
    tool_policy: toolPolicySchema,
    allowed_tools: z.array(z.string()).nullable(),
    strict_mode: z.boolean(),

    // budgets (seed 002) and limits (seed 000), one mechanism each
    max_inferences: positiveInteger,
    max_tokens_consumed: positiveInteger.nullable(),
    max_format_retries: nonNegativeInteger,
    max_retries: positiveInteger,
    max_tool_calls_per_turn: positiveInteger,
    step_timeout_ms: positiveInteger.nullable(),
    total_timeout_ms: positiveInteger.nullable(),
    tool_timeout_ms: positiveInteger,

    context_budget: z
      .object({
        context_window: positiveInteger,
        context_window_buffer_tokens: nonNegativeInteger,
        max_output_tokens: positiveInteger,
        reserved_system: nonNegativeInteger,
        reserved_synthesis: nonNegativeInteger,
        force_synthesis_at_ratio: z.number().gt(0).lte(1).nullable(),
      })
      .strict(),

    tool_output_budget: z
      .object({
        max_bytes_per_call: positiveInteger,
        truncation_marker: z.string(),
        summarizer_model: z.string().nullable(),
      })
      .strict(),

    // boundary/runtime configuration
    adapter_version: z.string(),
    grammar_profile: z.string().nullable(),
    grammar: z.string().nullable(),
    logits_mask: z.array(z.number()).nullable(),
    token_gate: z.boolean(),
    speculative_exec: z.boolean(),

    // anti-cycle controls
    cycle_forbid: z.array(z.tuple([z.string(), z.string()])),

    model_targets: z.array(modelTargetSchema).min(1),
    /** The primary target's request parameters (`model_targets[0].request_parameters`). */
    request_parameters: requestParametersSchema,
    /** Use the providers' streaming endpoints. */
    stream: z.boolean(),
    output: z
      .object({
        format: outputFormatSchema,
        schema: z.record(z.string(), z.unknown()).nullable(),
      })
      .strict(),
    tool_manifest: z.array(toolManifestEntrySchema),
    /** Where each decision came from (agent file, configuration, command line, default): traceable provenance. */
    decisions: z.record(z.string(), z.string()),
    /** The abilities prepended to `system_prompt`: present exactly in version 4. */
    abilities: contractAbilitiesSchema.optional(),
  })
  .strict();

/** Version 4 is version 3 plus `abilities`: the field is present exactly in version 4. */
function abilitiesMatchVersion(content: {
  readonly schema_version: number;
  readonly abilities?: ContractAbilities | undefined;
}): boolean {
  return (content.schema_version === 4) === (content.abilities !== undefined);
}
const abilitiesVersionIssue = {
  error: "abilities are recorded exactly in contracts of schema version 4",
  path: ["abilities"],
};

export const executionContractContentSchema = contentObjectSchema.refine(
  abilitiesMatchVersion,
  abilitiesVersionIssue,
);

export type ExecutionContractContent = z.infer<typeof executionContractContentSchema>;

export const executionContractSchema = contentObjectSchema
  .extend({
    contract_id: z.string().min(1),
    contract_hash: z.string().regex(/^[0-9a-f]{64}$/),
    created_at: z.string(),
  })
  .strict()
  .refine(abilitiesMatchVersion, abilitiesVersionIssue);

export type ExecutionContract = Readonly<z.infer<typeof executionContractSchema>>;
