import type { ToolPolicy } from "../contract/execution-contract.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import type { TranscriptEntry } from "../transcript/transcript-entry.js";

/**
 * What the model did over a run, as far as it decides the outcome. `endpoint_*` and `unusable_responses` are
 * the endpoint's or the model's failures to answer at all, not choices of the model.
 */
export type ModelBehaviour =
  | "called_tools_and_reported"
  | "reported_without_tools"
  | "narrated"
  | "malformed_output"
  | "called_forbidden_tool"
  | "kept_calling_tools"
  | "unusable_responses"
  | "endpoint_failed"
  | "endpoint_refused_credentials";

export interface BehaviourClassification {
  readonly behaviour: ModelBehaviour;
  /** One line per model attempt, in order: what the model answered. */
  readonly inferences: readonly string[];
  /** Calls of the agent's own tools (not `final_report` or `tool_output`) that executed. */
  readonly agentToolsExecuted: number;
  /** Attempts whose tool-call output could not be parsed (rejected whole or in part). */
  readonly malformedInferences: number;
}

/** Charter's built-in tools: calls of them do not satisfy `required` and are allowed under `forbidden`. */
const builtinTools = new Set(["final_report", "tool_output"]);
const malformedCodes = new Set([
  "MALFORMED_TOOL_ARGUMENTS",
  "TOOL_ARGUMENTS_NOT_OBJECT",
  "MISSING_TOOL_NAME",
]);

interface InferResult {
  readonly status?: string;
  readonly failure?: { readonly code?: string; readonly errorClass?: string };
  readonly failure_code?: string | null;
  readonly message?: {
    readonly content?: string;
    readonly tool_calls?: readonly { readonly name?: string }[];
  } | null;
  readonly rejected_calls?: readonly { readonly name?: string; readonly failure_code?: string }[];
}

interface Attempt {
  readonly description: string;
  readonly kind: "failed" | "malformed" | "unusable" | "calls" | "text";
  readonly callNames: readonly string[];
  readonly failureClass: string | null;
}

function readAttempt(entry: TranscriptEntry): Attempt {
  const result = (entry.result ?? {}) as InferResult;
  if (result.status === "failed") {
    const code = result.failure?.code ?? "unknown";
    return {
      description: `endpoint error (${code})`,
      kind: "failed",
      callNames: [],
      failureClass: result.failure?.errorClass ?? null,
    };
  }
  const rejected = result.rejected_calls ?? [];
  const malformed = rejected.filter((call) => malformedCodes.has(call.failure_code ?? ""));
  const calls = (result.message?.tool_calls ?? []).map((call) => call.name ?? "");
  if (result.status === "rejected" || malformed.length > 0) {
    const code = result.failure_code ?? malformed[0]?.failure_code ?? "EMPTY_RESPONSE";
    if (malformedCodes.has(code) || malformed.length > 0) {
      const names = malformed.map((call) => call.name || "(no name)");
      return {
        description: `malformed tool call (${code}) of ${names.join(", ") || "(no name)"}`,
        kind: "malformed",
        callNames: [...calls, ...names],
        failureClass: null,
      };
    }
    return {
      description: `unusable response (${code})`,
      kind: "unusable",
      callNames: [],
      failureClass: null,
    };
  }
  if (calls.length > 0)
    return { description: `called ${calls.join(", ")}`, kind: "calls", callNames: calls, failureClass: null };
  return { description: "answered in text", kind: "text", callNames: [], failureClass: null };
}

/** The tool results the EXECUTE entries of a transcript recorded, in order. */
export function executedToolResults(entries: readonly TranscriptEntry[]): ToolExecutionResult[] {
  return entries
    .filter((entry) => entry.state === "EXECUTE")
    .flatMap((entry) => (entry.result as { results?: ToolExecutionResult[] } | null)?.results ?? []);
}

/**
 * Reads what the model did from a run's transcript alone: each INFER entry's canonical message or rejection, and
 * which calls EXECUTE ran. The behaviour is decided by the attempt that ended the run (the last INFER), except
 * that any attempted call of a tool under `forbidden` is decisive wherever it happened.
 */
export function classifyModelBehaviour(
  entries: readonly TranscriptEntry[],
  toolPolicy: ToolPolicy,
): BehaviourClassification {
  const attempts = entries.filter((entry) => entry.state === "INFER").map(readAttempt);
  const agentToolsExecuted = executedToolResults(entries).filter(
    (result) => result.executed && !builtinTools.has(result.tool_name),
  ).length;
  const base = {
    inferences: attempts.map((attempt) => attempt.description),
    agentToolsExecuted,
    malformedInferences: attempts.filter((attempt) => attempt.kind === "malformed").length,
  };
  const forbiddenCall = attempts.some((attempt) => attempt.callNames.some((name) => !builtinTools.has(name)));
  if (toolPolicy === "forbidden" && forbiddenCall) return { ...base, behaviour: "called_forbidden_tool" };
  const last = attempts.at(-1);
  if (last === undefined) return { ...base, behaviour: "endpoint_failed" };
  switch (last.kind) {
    case "failed":
      return {
        ...base,
        behaviour: last.failureClass === "auth" ? "endpoint_refused_credentials" : "endpoint_failed",
      };
    case "unusable":
      return { ...base, behaviour: "unusable_responses" };
    case "malformed":
      return { ...base, behaviour: "malformed_output" };
    case "text":
      return { ...base, behaviour: "narrated" };
    case "calls":
      if (!last.callNames.includes("final_report")) return { ...base, behaviour: "kept_calling_tools" };
      return {
        ...base,
        behaviour: agentToolsExecuted > 0 ? "called_tools_and_reported" : "reported_without_tools",
      };
  }
}
