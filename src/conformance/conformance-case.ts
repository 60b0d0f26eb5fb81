import type { ContractSettings } from "../contract/contract-factory-input.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { RegisteredTool } from "../tools/tool-definition.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import type { TranscriptEntry } from "../transcript/transcript-entry.js";
import type { ConformanceToolLog } from "./conformance-tools.js";

/** The six cases of the conformance corpus, in the corpus's order. */
export type ConformanceCaseName =
  | "required_valid_call"
  | "required_malformed"
  | "required_narration"
  | "forbidden_attempted_call"
  | "oversized_output"
  | "timeout_call";

/** One finished run as a case's own checks see it. */
export interface ObservedRun {
  readonly result: AIAgentResult;
  readonly entries: readonly TranscriptEntry[];
  /** Every tool result the EXECUTE entries recorded, in order. */
  readonly toolResults: readonly ToolExecutionResult[];
  /** What the corpus's tools themselves saw run. */
  readonly toolLog: ConformanceToolLog;
}

/** One case: the contract it runs under, what it asks the model, its tools and its own checks. */
export interface ConformanceCase {
  readonly name: ConformanceCaseName;
  /** The case in words, as the corpus names it. */
  readonly title: string;
  readonly settings: ContractSettings;
  readonly systemPrompt: string;
  readonly prompt: string;
  /** The tools of one run (fresh per run, recording into `log`). */
  tools(log: ConformanceToolLog): readonly RegisteredTool[];
  /** What the case wants to see the model do; the model may do otherwise, and is judged on what it did. */
  readonly provokes: string;
  /** Problems with what the run did beyond the outcome class (empty when none). */
  check(run: ObservedRun): readonly string[];
}
