import { z } from "zod";
import {
  outputFormatSchema,
  reasoningLevelSchema,
  toolPolicySchema,
} from "../contract/execution-contract.js";
import { durationSchema } from "./mcp-server-configuration-schema.js";

const positiveInteger = z.number().int().positive();
const nonNegativeInteger = z.number().int().nonnegative();
const providerModelReference = z
  .string()
  .regex(/^[^/\s]+\/\S+$/, { error: 'expected "provider/model", for example "openai/gpt-4o"' });

/** An ability's id (and so every name of one): lowercase letters, digits and single hyphens between them. */
export const abilityIdPattern = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const abilityReference = z.string().regex(abilityIdPattern, {
  error: "expected an ability id: lowercase letters, digits and hyphens, for example sql-style",
});

/** One string or a list of strings, always read as a list. */
function stringOrList(item: z.ZodString, what: string) {
  return z
    .union([z.string(), z.array(z.string())], { error: `expected ${what} or a list of them` })
    .transform((value) => (typeof value === "string" ? [value] : value))
    .pipe(z.array(item));
}

/**
 * The request parameters: each may be `null`, meaning "do not send it to the provider". `reasoning` is a level
 * each provider maps onto its own option; `reasoningTokens` a reasoning budget for the providers that take one.
 */
export const modelParameterShape = {
  temperature: z.number().nonnegative().nullable().optional(),
  topP: z.number().min(0).max(1).nullable().optional(),
  topK: positiveInteger.nullable().optional(),
  maxOutputTokens: positiveInteger.nullable().optional(),
  frequencyPenalty: z.number().nullable().optional(),
  presencePenalty: z.number().nullable().optional(),
  seed: z.number().int().nullable().optional(),
  stopSequences: stringOrList(z.string(), "a stop sequence").nullable().optional(),
  reasoning: reasoningLevelSchema.nullable().optional(),
  reasoningTokens: positiveInteger.nullable().optional(),
  /** How long one model attempt may take before it fails as a timeout (a duration). */
  modelTimeout: durationSchema.optional(),
  /** The largest model response body accepted, in bytes: a larger one fails the attempt. */
  modelResponseMaxBytes: positiveInteger.optional(),
};

const outputSchema = z
  .object({
    format: outputFormatSchema,
    schema: z.record(z.string(), z.unknown()).optional(),
  })
  .strict()
  .refine((output) => output.schema === undefined || output.format === "json", {
    error: 'an output schema requires format "json"',
    path: ["schema"],
  });

/**
 * Every key an agent's frontmatter may set; the same keys are accepted in the configuration's
 * `defaults` and by `--set`. Strict: an unknown key is an error, never silently ignored.
 */
export const agentSettingsShape = {
  description: z.string().optional(),
  models: stringOrList(providerModelReference, 'a "provider/model" target')
    .refine((models) => models.length > 0, { error: "at least one model target is required" })
    .optional(),
  tools: stringOrList(z.string().min(1), "a tool or MCP server name").optional(),
  /** Sub-agents: agent files (paths relative to the listing file), each offered as the tool `agent__<name>`. */
  agents: stringOrList(z.string().min(1), "an agent file path").optional(),
  /** Tools that need an approval before every call, beside those annotated `destructiveHint: true`. */
  destructiveTools: stringOrList(z.string().min(1), "a tool or MCP server name").optional(),
  /** Tools declared read-only whatever their annotations say: re-run on resume, cacheable (`toolCache`). */
  readOnlyTools: stringOrList(z.string().min(1), "a tool or MCP server name").optional(),
  /** Tools declared idempotent whatever their annotations say: re-run on resume when they were in flight. */
  idempotentTools: stringOrList(z.string().min(1), "a tool or MCP server name").optional(),
  /** Destructive tools approved in advance: they run without asking. */
  approvedTools: stringOrList(z.string().min(1), "a tool name").optional(),
  /** The longest delegation chain (seed 003 INV-DT-001). */
  maxDepth: positiveInteger.optional(),
  /** The input a parent passes when it calls this agent as a sub-agent (JSON Schema); default `{ prompt: string }`. */
  inputSchema: z.record(z.string(), z.unknown()).optional(),
  /** Abilities always injected into the system prompt, first, in this order (ids from `abilitiesDir`). */
  coreAbilities: stringOrList(abilityReference, "an ability id").optional(),
  /** Abilities injected when they match the task (by relevance, then id), after the core ones. */
  abilities: stringOrList(abilityReference, "an ability id").optional(),
  /** The most tokens the injected abilities may take (default 2000); what does not fit is cut, with a warning. */
  abilityTokenBudget: positiveInteger.optional(),
  ...modelParameterShape,
  maxTurns: positiveInteger.optional(),
  maxToolCallsPerTurn: positiveInteger.optional(),
  maxRetries: positiveInteger.optional(),
  maxFormatRetries: nonNegativeInteger.optional(),
  maxTokensConsumed: positiveInteger.nullable().optional(),
  toolTimeout: durationSchema.optional(),
  stepTimeout: durationSchema.nullable().optional(),
  totalTimeout: durationSchema.nullable().optional(),
  toolResponseMaxBytes: positiveInteger.optional(),
  toolPolicy: toolPolicySchema.optional(),
  allowedTools: z.array(z.string().min(1)).nullable().optional(),
  cycleForbid: z.array(z.tuple([z.string().min(1), z.string().min(1)])).optional(),
  strict: z.boolean().optional(),
  tokenGate: z.boolean().optional(),
  forceSynthesisAtRatio: z.number().gt(0).lte(1).nullable().optional(),
  reservedSystemTokens: nonNegativeInteger.optional(),
  reservedSynthesisTokens: nonNegativeInteger.optional(),
  contextWindowBufferTokens: nonNegativeInteger.optional(),
  output: outputSchema.optional(),
  modelProfile: z.string().min(1).optional(),
  /** Use the providers' streaming endpoints (text arrives as it is generated). */
  stream: z.boolean().optional(),
};

export const agentSettingsSchema = z.object(agentSettingsShape).strict();

/** Agent ids: lowercase letters and digits in groups joined by single hyphens (`pr-reviewer`). */
export const agentIdPattern = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export const agentIdSchema = z.string().regex(agentIdPattern, {
  error: 'expected lowercase letters, digits and single hyphens, for example "pr-reviewer"',
});

/** How an agent may hand work to others beyond its `agents` list: `auto` offers the `delegate` tool. */
export const delegationModeSchema = z.enum(["auto", "none"]);
export type DelegationMode = z.infer<typeof delegationModeSchema>;

/**
 * The keys that describe an agent in a registry and how it is selected. Frontmatter only: they say what an agent
 * is, so neither the configuration's `defaults` nor `--set` may set them.
 */
export const agentProfileShape = {
  /** The registry id; default the id derived from the file name. */
  id: agentIdSchema.optional(),
  /** A disabled agent is never selected, delegated to or run by id (default true). */
  enabled: z.boolean().optional(),
  keywords: stringOrList(z.string().trim().min(1), "a keyword").optional(),
  exampleTasks: stringOrList(z.string().trim().min(1), "an example task").optional(),
  notForTasks: stringOrList(z.string().trim().min(1), "a task this agent is not for").optional(),
  delegation: delegationModeSchema.optional(),
};

/** Everything an agent file's frontmatter may hold: the contract settings and the profile keys. */
export const agentFrontmatterSchema = z.object({ ...agentSettingsShape, ...agentProfileShape }).strict();

export type AgentProfileKey = keyof typeof agentProfileShape;

export const agentProfileKeys: readonly AgentProfileKey[] = Object.keys(
  agentProfileShape,
) as AgentProfileKey[];

/** Parsed settings: durations in milliseconds, `models`, `tools` and `stopSequences` always lists. */
export type AgentSettings = z.output<typeof agentSettingsSchema>;
export type AgentSettingKey = keyof typeof agentSettingsShape;

export const agentSettingKeys: readonly AgentSettingKey[] = Object.keys(
  agentSettingsShape,
) as AgentSettingKey[];

export function isAgentSettingKey(key: string): key is AgentSettingKey {
  return Object.hasOwn(agentSettingsShape, key);
}
