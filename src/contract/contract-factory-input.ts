import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { AgentSelectionRecord } from "./agent-selection-record.js";
import type {
  ContractSchemaVersion,
  OutputFormat,
  ReasoningLevel,
  ToolManifestEntry,
  ToolPolicy,
} from "./execution-contract.js";

/**
 * The request parameters a layer may set. `null` means "do not send this parameter"; an absent key
 * means "this layer has no opinion", so a lower layer decides.
 */
export interface ModelParameterSettings {
  readonly temperature?: number | null;
  readonly topP?: number | null;
  readonly topK?: number | null;
  readonly maxOutputTokens?: number | null;
  readonly frequencyPenalty?: number | null;
  readonly presencePenalty?: number | null;
  readonly seed?: number | null;
  readonly stopSequences?: readonly string[] | null;
  readonly reasoning?: ReasoningLevel | null;
  readonly reasoningTokens?: number | null;
  /** Not sent to the provider: how long one attempt may take, in milliseconds. */
  readonly modelTimeout?: number;
  /** Not sent to the provider: the largest response body accepted, in bytes. */
  readonly modelResponseMaxBytes?: number;
}

/**
 * One layer of contract settings (command line, agent frontmatter or configuration `defaults`), already
 * parsed: durations in milliseconds, camelCase keys as in the agent frontmatter. Defined here so that the
 * contract module does not depend on how settings are read.
 */
export interface ContractSettings extends ModelParameterSettings {
  readonly maxTurns?: number;
  readonly maxToolCallsPerTurn?: number;
  readonly maxRetries?: number;
  readonly maxFormatRetries?: number;
  readonly maxTokensConsumed?: number | null;
  readonly toolTimeout?: number;
  readonly stepTimeout?: number | null;
  readonly totalTimeout?: number | null;
  readonly toolResponseMaxBytes?: number;
  readonly toolPolicy?: ToolPolicy;
  readonly allowedTools?: readonly string[] | null;
  readonly cycleForbid?: readonly (readonly [string, string])[];
  readonly strict?: boolean;
  readonly tokenGate?: boolean;
  readonly forceSynthesisAtRatio?: number | null;
  readonly reservedSystemTokens?: number;
  readonly reservedSynthesisTokens?: number;
  readonly contextWindowBufferTokens?: number;
  readonly output?: {
    readonly format: OutputFormat;
    readonly schema?: Readonly<Record<string, unknown>> | null;
  };
  readonly modelProfile?: string;
  readonly stream?: boolean;
}

/** A `provider/model` target as resolved from the configuration. */
export interface ContractModelTargetInput {
  readonly provider: string;
  readonly model: string;
  /** Absent: the built-in default context window applies. */
  readonly contextWindow?: number;
  readonly contextWindowBufferTokens?: number;
  readonly tokenizer?: string | null;
  /**
   * Per-model (and per-provider) request parameter overrides from the configuration; for this target they
   * beat the agent file and the configuration defaults, and lose only to the command line.
   */
  readonly parameters?: ModelParameterSettings;
}

/** One ability as injected: what the contract records of it (its text is in the system prompt). */
export interface InjectedAbility {
  readonly id: string;
  /** `core`: named in `coreAbilities`, always first; `matched`: a candidate from `abilities` that matched the task. */
  readonly kind: "core" | "matched";
  /** BLAKE3 of the ability's whole knowledge text (its body), whether or not it was cut. */
  readonly contentHash: string;
  /** The keyword relevance that selected a matched ability; null for a core ability. */
  readonly relevance: number | null;
  /** Tokens of the ability's section in the injected text. */
  readonly tokens: number;
  /** Cut at a token boundary to fit the budget. */
  readonly truncated: boolean;
}

/**
 * The abilities prepended to the system prompt (planned by the runner, which can count tokens): the text, what it
 * holds, and the budget it was fitted to. The factory records it in the contract, so it is hashed with it.
 */
export interface ContractAbilityInjection {
  /** Prepended to the agent's system prompt (separated by a blank line); empty when nothing matched. */
  readonly text: string;
  /** Tokens of `text`, counted with the context guard's tokenizer; never more than `tokenBudget`. */
  readonly tokens: number;
  readonly tokenBudget: number;
  readonly tokenBudgetSource: DecisionSource;
  readonly injected: readonly InjectedAbility[];
  /** Abilities that were to be injected but did not fit at all, in priority order. */
  readonly leftOut: readonly Omit<InjectedAbility, "tokens" | "truncated">[];
  /** What was cut or left out, in words (recorded in `decisions`); null when everything fitted. */
  readonly cut: string | null;
}

export interface ContractFactoryInput {
  readonly agent: { readonly id: string; readonly systemPrompt: string; readonly settings: ContractSettings };
  readonly configurationDefaults: ContractSettings;
  /** Command-line `--set` overrides: the highest layer. */
  readonly overrides: ContractSettings;
  /** In fallback order; the first is the primary target. */
  readonly modelTargets: readonly ContractModelTargetInput[];
  /** Every tool the run may offer, built-ins included. */
  readonly toolManifest: readonly ToolManifestEntry[];
  readonly parentContractHash: string | null;
  /** Wins over every `modelProfile` setting when given. */
  readonly modelProfileId?: string;
  readonly adapterVersion: string;
  /**
   * The abilities injected for this run's task, or absent when the agent names none: the contract then keeps the
   * shape (and schema version) it had before abilities existed, so runs recorded then still resume.
   */
  readonly abilities?: ContractAbilityInjection;
  /**
   * How the agent was chosen, when a selector chose it: recorded in `decisions.agent_selection` (canonical JSON).
   * Absent for an agent named by the user, whose contract is then what it was before selection existed.
   */
  readonly agentSelection?: AgentSelectionRecord;
  /**
   * The schema version to build, for a run recorded under an earlier one (a resume): the contract is then built as
   * that version's factory built it, so that the same agent and configuration give the hash the run recorded.
   * Version 2 has no per-target attempt bounds (`model_timeout_ms`, `max_response_bytes`) and records no decision
   * for them. Absent: today's version (3, or 4 when abilities are injected).
   */
  readonly schemaVersion?: ContractSchemaVersion;
  /** Supplies `contract_id` and `created_at`, the two fields the hash leaves out. */
  readonly environment: RuntimeEnvironment;
}

/** Where a contract decision came from, recorded in `decisions`. */
export type DecisionSource = "cli" | "agent" | "configuration" | "model" | "default" | "input";
