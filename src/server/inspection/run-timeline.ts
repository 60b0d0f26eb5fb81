import type { LlmAccountingEntry, ToolAccountingEntry } from "../../session/accounting-entry.js";
import type { RunStore } from "../../store/run-store.js";

/** One model attempt of a run, as its accounting entry records it. */
export interface TimelineModelCall {
  readonly turn: number;
  /** `provider/model`. */
  readonly target: string;
  /** 1 for the first attempt of a call; a higher attempt is a retry. */
  readonly attempt: number;
  readonly status: "ok" | "failed";
  readonly latencyMs: number;
  readonly tokens: { readonly input: number; readonly output: number };
  /** Null when no price is configured for the target. */
  readonly costUsd: number | null;
  readonly errorCode: string | null;
  readonly retry: boolean;
  /** Another target than the attempt before it in the same turn, which failed: the run failed over. */
  readonly failover: boolean;
  readonly at: number;
}

/** One tool call of a run: what the model asked (from the transcript), what came of it (accounting, results). */
export interface TimelineToolCall {
  readonly turn: number;
  readonly callId: string;
  readonly tool: string;
  readonly arguments: unknown;
  /** `ok`, `failed`, or `awaiting_approval` for a destructive call a person has not decided yet. */
  readonly status: string;
  readonly durationMs: number | null;
  /** The first 200 characters of the result's JSON text. */
  readonly resultPreview: string | null;
  readonly errorCode: string | null;
  readonly cacheHit: boolean | null;
}

export interface RunTimeline {
  readonly runId: string;
  readonly turns: readonly {
    readonly turn: number;
    readonly modelCalls: readonly TimelineModelCall[];
    readonly toolCalls: readonly TimelineToolCall[];
  }[];
}

const previewLength = 200;

function preview(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  // A stored tool result is its whole envelope (ids, sizes, timings): what the tool answered is its content.
  const content = typeof value === "object" ? (value as { readonly content?: unknown }).content : undefined;
  const shown = typeof content === "string" ? content : value;
  const text = typeof shown === "string" ? shown : JSON.stringify(shown);
  return text.length > previewLength ? `${text.slice(0, previewLength)}…` : text;
}

interface AskedCall {
  readonly turn: number;
  readonly id: string;
  readonly name: string;
  readonly arguments: unknown;
}

/**
 * A run's timeline, turn by turn: each model attempt (its target, latency, tokens, cost; retries and failovers
 * marked) and each tool call (its arguments, status, duration and a preview of its result). Built from what the
 * store keeps: the accounting entries (one per model attempt and per tool execution), the transcript's EXECUTE
 * entries (the calls the model asked for, redacted like the rest of the transcript) and the stored tool results.
 */
export async function runTimeline(store: RunStore, runId: string): Promise<RunTimeline> {
  const [accounting, results] = await Promise.all([
    store.readAccounting(runId),
    store.readToolResults(runId),
  ]);
  const asked: AskedCall[] = [];
  const pending = new Set<string>();
  for await (const entry of store.readEntries(runId)) {
    if (entry.state !== "EXECUTE") continue;
    const action = entry.action as { calls?: { id?: unknown; name?: unknown; arguments?: unknown }[] };
    for (const call of action.calls ?? []) {
      if (typeof call.id !== "string") continue;
      // A call decided after an approval is executed again in a later EXECUTE entry: keep its first place.
      if (!asked.some((known) => known.id === call.id)) {
        asked.push({
          turn: entry.turn,
          id: call.id,
          name: String(call.name),
          arguments: call.arguments ?? null,
        });
      }
    }
    const result = entry.result as { pending_approvals?: unknown[] };
    for (const id of result.pending_approvals ?? []) if (typeof id === "string") pending.add(id);
  }
  const models = accounting.filter((entry): entry is LlmAccountingEntry => entry.type === "llm");
  const tools = accounting.filter((entry): entry is ToolAccountingEntry => entry.type === "tool");
  const modelCalls: TimelineModelCall[] = models.map((entry, index) => {
    const before = index > 0 ? models[index - 1] : undefined;
    const target = `${entry.provider}/${entry.model}`;
    return {
      turn: entry.turn,
      target,
      attempt: entry.attempt,
      status: entry.status,
      latencyMs: entry.latency,
      tokens: { input: entry.tokens.input, output: entry.tokens.output },
      costUsd: entry.costUsd ?? null,
      errorCode: entry.errorCode ?? null,
      retry: entry.attempt > 1,
      failover:
        before !== undefined &&
        before.turn === entry.turn &&
        before.status === "failed" &&
        `${before.provider}/${before.model}` !== target,
      at: entry.timestamp,
    };
  });
  const toolCalls: TimelineToolCall[] = asked.map((call) => {
    const executed = tools.filter((entry) => entry.callId === call.id).at(-1);
    const result = results.filter((record) => record.callId === call.id).at(-1);
    const status =
      result?.status ?? executed?.status ?? (pending.has(call.id) ? "awaiting_approval" : "not_run");
    return {
      turn: call.turn,
      callId: call.id,
      tool: call.name,
      arguments: call.arguments,
      status,
      durationMs: executed?.latency ?? null,
      resultPreview: preview(result?.result),
      errorCode: result?.errorCode ?? executed?.errorCode ?? null,
      cacheHit: executed?.cache_hit ?? null,
    };
  });
  const turnNumbers = [...new Set([...modelCalls, ...toolCalls].map((call) => call.turn))].sort(
    (left, right) => left - right,
  );
  return {
    runId,
    turns: turnNumbers.map((turn) => ({
      turn,
      modelCalls: modelCalls.filter((call) => call.turn === turn),
      toolCalls: toolCalls.filter((call) => call.turn === turn),
    })),
  };
}
