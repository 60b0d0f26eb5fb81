import { deepFreeze } from "../foundation/deep-freeze.js";
import type { OutputFormat, ReasoningLevel, ToolPolicy } from "./execution-contract.js";

/**
 * The built-in defaults: the lowest layer of contract precedence (command line > agent file >
 * configuration `defaults` > these; for request parameters, per-model configuration comes right after the
 * command line). Keys are the agent frontmatter keys,
 * plus `contextWindow` (a per-model setting) and the fixed contract constants. docs/configuration.md
 * lists the same table; a test keeps the two equal.
 */
export interface ContractDefaults {
  readonly maxTurns: number;
  readonly maxRetries: number;
  readonly maxToolCallsPerTurn: number;
  readonly maxFormatRetries: number;
  readonly maxTokensConsumed: number | null;
  readonly toolTimeout: number;
  readonly stepTimeout: number | null;
  readonly totalTimeout: number | null;
  readonly toolResponseMaxBytes: number;
  readonly modelTimeout: number;
  readonly modelResponseMaxBytes: number;
  readonly toolPolicy: ToolPolicy;
  readonly allowedTools: readonly string[] | null;
  readonly cycleForbid: readonly (readonly [string, string])[];
  readonly strict: boolean;
  readonly tokenGate: boolean;
  readonly contextWindow: number;
  readonly contextWindowBufferTokens: number;
  readonly maxOutputTokens: number;
  readonly reservedSystemTokens: number;
  readonly reservedSynthesisTokens: number;
  readonly forceSynthesisAtRatio: number | null;
  readonly temperature: number | null;
  readonly topP: number | null;
  readonly topK: number | null;
  readonly frequencyPenalty: number | null;
  readonly presencePenalty: number | null;
  readonly seed: number | null;
  readonly stopSequences: readonly string[] | null;
  readonly reasoning: ReasoningLevel | null;
  readonly reasoningTokens: number | null;
  readonly stream: boolean;
  readonly output: {
    readonly format: OutputFormat;
    readonly schema: Readonly<Record<string, unknown>> | null;
  };
  /** The most tokens an agent's injected abilities may take. */
  readonly abilityTokenBudget: number;
  readonly truncationMarker: string;
  readonly summarizerModel: string | null;
  readonly grammarProfile: string | null;
  readonly speculativeExec: boolean;
}

export const contractDefaults: ContractDefaults = deepFreeze({
  maxTurns: 10,
  maxRetries: 3,
  maxToolCallsPerTurn: 10,
  // Strict mode disables repair, not the retry: one format retry stays the default either way (and is the
  // most strict mode allows, seed 002 §7.6).
  maxFormatRetries: 1,
  maxTokensConsumed: null,
  toolTimeout: 60_000,
  stepTimeout: null,
  totalTimeout: null,
  toolResponseMaxBytes: 12_288,
  // Three minutes: a 4,096-token answer from a slow local model (about 25 tokens/s) still fits; three attempts
  // of a turn stay under ten minutes.
  modelTimeout: 180_000,
  // 4 MiB: far above any real answer (a 4,096-token answer is well under 100 KB even streamed, chunk by chunk),
  // far below what would strain memory.
  modelResponseMaxBytes: 4_194_304,
  toolPolicy: "optional",
  allowedTools: null,
  cycleForbid: [],
  strict: false,
  tokenGate: false,
  contextWindow: 128_000,
  contextWindowBufferTokens: 256,
  maxOutputTokens: 4096,
  reservedSystemTokens: 0,
  reservedSynthesisTokens: 1024,
  forceSynthesisAtRatio: null,
  temperature: null,
  topP: null,
  topK: null,
  frequencyPenalty: null,
  presencePenalty: null,
  seed: null,
  stopSequences: null,
  reasoning: null,
  reasoningTokens: null,
  stream: false,
  output: { format: "markdown", schema: null },
  abilityTokenBudget: 2000,
  truncationMarker: "[…truncated]",
  summarizerModel: null,
  grammarProfile: null,
  speculativeExec: false,
});
