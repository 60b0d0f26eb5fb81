import type { RunRouting } from "../../runner/run-agent-options.js";
import type {
  AccountingEntry,
  LlmAccountingEntry,
  ToolAccountingEntry,
} from "../../session/accounting-entry.js";
import type { AIAgentResult } from "../../session/agent-result.js";

/** Built-in tools are Charter's own (handing in the report, reading a stored output), not calls the run made. */
const builtInTools: ReadonlySet<string> = new Set(["final_report", "tool_output"]);
/** How much of a tool's result the telemetry keeps. */
const resultPreviewLength = 200;

/** One tool call as the seed's telemetry lists it, with whether the read-only cache answered it. */
export interface TelemetryToolCall {
  readonly tool: string;
  readonly call_id: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly result_preview: string;
  /** `ok`, or `failed: <error code>`. */
  readonly summary: string;
  /** True or false for a cacheable (read-only) tool; null for a tool that is never cached. */
  readonly cache_hit: boolean | null;
}

/** The seed's required telemetry of one run, as its COMPLETED or FAILED event carries it. */
export interface RunTelemetry {
  /** Which agent the run went to and how sure the choice was: the selector's for `auto`, else the named agent. */
  readonly intent: {
    readonly intent: string | null;
    readonly entity: null;
    readonly confidence: number | null;
    readonly source: "selector" | "named";
  };
  /** The provider and model of the answer the run ended on (the last successful model call, else the last one). */
  readonly provider: string | null;
  readonly model: string | null;
  /** From the request's acceptance to the run's end, in milliseconds. */
  readonly latency_ms: number;
  readonly token_usage: {
    readonly prompt_tokens: number;
    readonly completion_tokens: number;
    readonly total_tokens: number;
  };
  readonly tool_calls: readonly TelemetryToolCall[];
  /** Model attempts that failed and were retried (on the same target or another). */
  readonly retry_count: number;
  /** `failover` when the run succeeded on another target than one that failed it. */
  readonly final_state: "success" | "error" | "failover";
}

function isLlm(entry: AccountingEntry): entry is LlmAccountingEntry {
  return entry.type === "llm";
}

function isTool(entry: AccountingEntry): entry is ToolAccountingEntry {
  return entry.type === "tool";
}

/** The tool calls of the run's conversation, each with its answer and its accounting entry (by call id, in order). */
function toolCallsOf(result: AIAgentResult): TelemetryToolCall[] {
  const accounting = result.accounting.filter(isTool);
  const used = new Set<ToolAccountingEntry>();
  const calls: TelemetryToolCall[] = [];
  const conversation = result.conversation;
  for (let index = 0; index < conversation.length; index++) {
    const message = conversation[index];
    if (message === undefined || message.role !== "assistant" || message.tool_calls.length === 0) continue;
    // The tool messages that follow answer this message's calls (call ids repeat across turns, not within one).
    const answers = new Map<string, string>();
    for (let next = index + 1; next < conversation.length; next++) {
      const answer = conversation[next];
      if (answer === undefined || answer.role !== "tool") break;
      if (answer.tool_call_id !== undefined && !answers.has(answer.tool_call_id))
        answers.set(answer.tool_call_id, answer.content);
    }
    for (const call of message.tool_calls) {
      if (builtInTools.has(call.name)) continue;
      const entry = accounting.find((candidate) => !used.has(candidate) && candidate.callId === call.id);
      if (entry !== undefined) used.add(entry);
      const content = answers.get(call.id) ?? "";
      const failed = entry !== undefined ? entry.status === "failed" : content.startsWith("(tool failed");
      calls.push({
        tool: call.name,
        call_id: call.id,
        args: (call.arguments ?? {}) as Record<string, unknown>,
        result_preview: content.slice(0, resultPreviewLength),
        summary: failed ? `failed: ${entry?.errorCode ?? "unknown"}` : "ok",
        cache_hit: entry?.cache_hit ?? null,
      });
    }
  }
  return calls;
}

/** The seed's telemetry of a finished (or stopped) run, computed from its result. Redact it before storing it. */
export function runTelemetry(
  result: AIAgentResult,
  routing: RunRouting | null,
  latencyMilliseconds: number,
): RunTelemetry {
  const attempts = result.accounting.filter(isLlm);
  const succeeded = attempts.filter((attempt) => attempt.status === "ok");
  const last = succeeded.at(-1) ?? attempts.at(-1);
  const failed = attempts.filter((attempt) => attempt.status === "failed");
  const prompt = attempts.reduce((sum, attempt) => sum + attempt.tokens.input, 0);
  const completion = attempts.reduce((sum, attempt) => sum + attempt.tokens.output, 0);
  const lastSucceeded = succeeded.at(-1);
  const failedOver =
    result.success &&
    lastSucceeded !== undefined &&
    failed.some(
      (attempt) => attempt.provider !== lastSucceeded.provider || attempt.model !== lastSucceeded.model,
    );
  const selection = routing?.selection ?? null;
  const selected = selection?.candidates.find((candidate) => candidate.agentId === selection.selected);
  return {
    intent: {
      intent: selection?.selected ?? routing?.agentId ?? null,
      entity: null,
      confidence: selection === null ? (routing === null ? null : 1) : (selected?.confidence ?? null),
      source: selection === null ? "named" : "selector",
    },
    provider: last?.provider ?? routing?.targets[0]?.provider ?? null,
    model: last?.model ?? routing?.targets[0]?.model ?? null,
    latency_ms: Math.max(0, latencyMilliseconds),
    token_usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    tool_calls: toolCallsOf(result),
    retry_count: failed.length,
    final_state: !result.success ? "error" : failedOver ? "failover" : "success",
  };
}
