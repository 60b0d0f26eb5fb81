import type { AgentMessage } from "../contract/agent-message.js";
import type { AccountingEntry } from "../session/accounting-entry.js";
import type { TranscriptEntry } from "../transcript/transcript-entry.js";

/** One model attempt of a turn, as `charter runs show --conversation` shows it. */
export interface ConversationAttempt {
  readonly attempt: number;
  /** `provider/model`. */
  readonly target: string | null;
  readonly status: "ok" | "failed";
  readonly errorCode: string | null;
  readonly errorMessage: string | null;
  readonly tokens: { readonly input: number; readonly output: number };
  readonly latencyMs: number | null;
  readonly costUsd: number | null;
}

/** One tool call of a turn with its result. */
export interface ConversationToolCall {
  readonly callId: string;
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** `ok`, `failed`, `dropped`, or `not_run` (refused before it ran, or waiting for an approval). */
  readonly status: string;
  readonly errorCode: string | null;
  /** What the model was given back; null when the call did not run. */
  readonly result: string | null;
  readonly latencyMs: number | null;
}

export interface ConversationTurn {
  readonly turn: number;
  readonly attempts: readonly ConversationAttempt[];
  /** The accepted answer of the turn; null when every attempt failed. */
  readonly assistant: { readonly content: string; readonly reasoning: string | null } | null;
  readonly toolCalls: readonly ConversationToolCall[];
  /** The turn's totals over its attempts (latency: model time plus tool time). */
  readonly tokens: { readonly input: number; readonly output: number };
  readonly latencyMs: number;
  readonly costUsd: number | null;
}

/** A stored run as a person reads it: the opening messages, each turn, and how it ended. */
export interface ConversationView {
  readonly runId: string;
  /** The system prompt and the user's task, as sent. */
  readonly opening: readonly { readonly role: string; readonly content: string }[];
  readonly turns: readonly ConversationTurn[];
  readonly outcome: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly finalReport: unknown;
}

type Json = Record<string, unknown>;

/**
 * Reads a run's conversation out of its stored transcript entries (the messages, reasoning, tool calls and
 * results, exactly as recorded and redacted) and its accounting entries (latency and cost of each attempt and
 * tool call). Pure: the same entries always give the same view.
 */
export function conversationView(
  runId: string,
  entries: readonly TranscriptEntry[],
  accounting: readonly AccountingEntry[],
): ConversationView {
  let opening: ConversationView["opening"] | null = null;
  const turns = new Map<number, MutableTurn>();
  let outcome: string | null = null;
  let error: ConversationView["error"] = null;
  let finalReport: unknown = null;
  const turnOf = (turn: number): MutableTurn => {
    let current = turns.get(turn);
    if (current === undefined) {
      current = { turn, attempts: [], assistant: null, calls: new Map() };
      turns.set(turn, current);
    }
    return current;
  };

  for (const entry of entries) {
    const action = entry.action as Json;
    const result = entry.result as Json;
    if (entry.state === "PRECHECK" && opening === null && Array.isArray(action.conversation)) {
      opening = (action.conversation as AgentMessage[]).map((message) => ({
        role: message.role,
        content: message.content,
      }));
    } else if (entry.state === "INFER") {
      const turn = turnOf(entry.turn);
      const failure = result.failure as Json | undefined;
      const usage = result.usage as { inputTokens?: number; outputTokens?: number } | null | undefined;
      const accepted = failure === undefined && result.status !== "rejected";
      turn.attempts.push({
        attempt: typeof action.attempt === "number" ? action.attempt : turn.attempts.length + 1,
        target: typeof action.target === "string" ? action.target : entry.model_fingerprint,
        status: accepted ? "ok" : "failed",
        errorCode:
          typeof failure?.code === "string"
            ? failure.code
            : typeof result.failure_code === "string"
              ? result.failure_code
              : null,
        errorMessage: typeof failure?.message === "string" ? failure.message : null,
        tokens: { input: usage?.inputTokens ?? 0, output: usage?.outputTokens ?? 0 },
        latencyMs: null,
        costUsd: null,
      });
      const message = result.message as AgentMessage | null | undefined;
      if (accepted && message !== null && message !== undefined) {
        turn.assistant = { content: message.content, reasoning: message.reasoning ?? null };
        for (const call of message.tool_calls) {
          turn.calls.set(call.id, {
            callId: call.id,
            name: call.name,
            arguments: call.arguments,
            status: "not_run",
            errorCode: null,
            result: null,
            latencyMs: null,
          });
        }
      }
    } else if (entry.state === "VALIDATE_CALLS") {
      for (const planned of (result.planned as Json[] | undefined) ?? []) {
        const call = turnOf(entry.turn).calls.get(String(planned.id));
        if (call === undefined) continue;
        call.status = String(planned.status);
        call.errorCode = typeof planned.error_code === "string" ? planned.error_code : null;
      }
    } else if (entry.state === "EXECUTE") {
      for (const executed of (result.results as Json[] | undefined) ?? []) {
        const call = turnOf(entry.turn).calls.get(String(executed.call_id));
        if (call === undefined) continue;
        call.status = String(executed.status);
        call.errorCode = typeof executed.error_code === "string" ? executed.error_code : null;
        call.result = typeof executed.content === "string" ? executed.content : null;
        call.latencyMs = typeof executed.latency_ms === "number" ? executed.latency_ms : null;
      }
    } else if (entry.state === "TERMINATE") {
      outcome = typeof result.outcome === "string" ? result.outcome : null;
      const stoppedWith = result.error as { code?: unknown; message?: unknown } | null;
      error =
        stoppedWith !== null && typeof stoppedWith === "object"
          ? { code: String(stoppedWith.code), message: String(stoppedWith.message) }
          : null;
      finalReport = result.final_report ?? null;
    }
  }

  // Latency and cost come from the accounting entries, matched by turn and attempt (model) or call id (tool).
  for (const item of accounting) {
    const turn = turns.get(item.turn);
    if (turn === undefined) continue;
    if (item.type === "llm") {
      const index = turn.attempts.findIndex((attempt) => attempt.attempt === item.attempt);
      const attempt = turn.attempts[index];
      if (attempt !== undefined)
        turn.attempts[index] = { ...attempt, latencyMs: item.latency, costUsd: item.costUsd ?? null };
    } else {
      const call = turn.calls.get(item.callId);
      if (call !== undefined && call.latencyMs === null) call.latencyMs = item.latency;
    }
  }

  return {
    runId,
    opening: opening ?? [],
    turns: [...turns.values()]
      .sort((left, right) => left.turn - right.turn)
      .map((turn) => {
        const toolCalls = [...turn.calls.values()];
        const priced = turn.attempts.filter((attempt) => attempt.costUsd !== null);
        return {
          turn: turn.turn,
          attempts: turn.attempts,
          assistant: turn.assistant,
          toolCalls,
          tokens: {
            input: sum(turn.attempts.map((attempt) => attempt.tokens.input)),
            output: sum(turn.attempts.map((attempt) => attempt.tokens.output)),
          },
          latencyMs:
            sum(turn.attempts.map((attempt) => attempt.latencyMs ?? 0)) +
            sum(toolCalls.map((call) => call.latencyMs ?? 0)),
          costUsd: priced.length === 0 ? null : sum(priced.map((attempt) => attempt.costUsd ?? 0)),
        };
      }),
    outcome,
    error,
    finalReport,
  };
}

interface MutableTurn {
  readonly turn: number;
  readonly attempts: ConversationAttempt[];
  assistant: ConversationTurn["assistant"];
  readonly calls: Map<string, { -readonly [K in keyof ConversationToolCall]: ConversationToolCall[K] }>;
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}
