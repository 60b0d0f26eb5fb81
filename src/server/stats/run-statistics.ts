import type { StoredRunEvent } from "../../store/run-event-records.js";
import type { RunStore } from "../../store/run-store.js";

export const statisticsGroupings = ["provider", "model", "agent", "status"] as const;
export type StatisticsGrouping = (typeof statisticsGroupings)[number];

/** One finished run, as its stored lifecycle events and run record say. */
export interface FinishedRun {
  readonly provider: string;
  readonly model: string;
  readonly agent: string;
  readonly status: "completed" | "failed" | "cancelled";
  readonly durationMilliseconds: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly costUsd: number;
  readonly toolCalls: number;
  readonly cacheHits: number;
  readonly cacheMisses: number;
  readonly failover: boolean;
  /** When the run ended (its COMPLETED or FAILED event, by the store's clock). */
  readonly endedAt: number;
}

export interface RunStatisticsFigures {
  readonly runs: number;
  readonly byStatus: Record<string, number>;
  readonly byProvider: Record<string, number>;
  readonly byModel: Record<string, number>;
  readonly byAgent: Record<string, number>;
  readonly durationMs: { readonly average: number | null; readonly p95: number | null };
  readonly tokens: { readonly prompt: number; readonly completion: number; readonly total: number };
  readonly costUsd: number;
  readonly toolCalls: { readonly total: number; readonly perRun: number | null };
  readonly cache: { readonly hits: number; readonly misses: number; readonly hitRatio: number | null };
  /** Per provider: the share of its runs that failed (cancellations aside). */
  readonly errorRateByProvider: Record<string, number>;
  readonly failovers: number;
}

export interface RunStatistics extends RunStatisticsFigures {
  readonly from: number;
  readonly to: number;
  /** Runs accepted within the range (REQUESTED events), per minute of the range. */
  readonly requests: number;
  readonly requestsPerMinute: number;
  readonly groups?: readonly ({ readonly key: string } & RunStatisticsFigures)[];
  /** With a bucket size: the same figures for each bucket of the range, oldest first (charts over time). */
  readonly series?: readonly RunStatisticsBucket[];
}

/** One bucket of a series: the runs that ended in `[from, to)` and the runs accepted in it. */
export interface RunStatisticsBucket extends RunStatisticsFigures {
  readonly from: number;
  readonly to: number;
  readonly requests: number;
  readonly groups?: readonly ({ readonly key: string } & RunStatisticsFigures)[];
}

/** The most buckets one series may have, so that a request cannot make the server compute without bound. */
export const maximumStatisticsBuckets = 1440;

const unknown = "unknown";

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

function number(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** Rounded to 6 decimals, so that a ratio reads the same on every backend and platform. */
function ratio(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : Math.round((numerator / denominator) * 1e6) / 1e6;
}

function countBy(runs: readonly FinishedRun[], key: (run: FinishedRun) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const run of runs) counts[key(run)] = (counts[key(run)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([left], [right]) => left.localeCompare(right)));
}

/** The figures of a set of runs: the p95 is the nearest-rank 95th percentile of their durations. */
export function figuresOf(runs: readonly FinishedRun[]): RunStatisticsFigures {
  const durations = runs.map((run) => run.durationMilliseconds).sort((left, right) => left - right);
  const sum = (pick: (run: FinishedRun) => number) => runs.reduce((total, run) => total + pick(run), 0);
  const prompt = sum((run) => run.promptTokens);
  const completion = sum((run) => run.completionTokens);
  const toolCalls = sum((run) => run.toolCalls);
  const hits = sum((run) => run.cacheHits);
  const misses = sum((run) => run.cacheMisses);
  const errorRateByProvider: Record<string, number> = {};
  for (const [provider] of Object.entries(countBy(runs, (run) => run.provider))) {
    const ended = runs.filter((run) => run.provider === provider && run.status !== "cancelled");
    const rate = ratio(ended.filter((run) => run.status === "failed").length, ended.length);
    if (rate !== null) errorRateByProvider[provider] = rate;
  }
  return {
    runs: runs.length,
    byStatus: countBy(runs, (run) => run.status),
    byProvider: countBy(runs, (run) => run.provider),
    byModel: countBy(runs, (run) => run.model),
    byAgent: countBy(runs, (run) => run.agent),
    durationMs: {
      average:
        durations.length === 0 ? null : Math.round(sum((run) => run.durationMilliseconds) / durations.length),
      p95: durations.length === 0 ? null : (durations[Math.ceil(0.95 * durations.length) - 1] ?? null),
    },
    tokens: { prompt, completion, total: prompt + completion },
    costUsd: Math.round(sum((run) => run.costUsd) * 1e6) / 1e6,
    toolCalls: { total: toolCalls, perRun: ratio(toolCalls, runs.length) },
    cache: { hits, misses, hitRatio: ratio(hits, hits + misses) },
    errorRateByProvider,
    failovers: runs.filter((run) => run.failover).length,
  };
}

async function* eventsInRange(
  store: RunStore,
  types: StoredRunEvent["type"][],
  from: number,
  to: number,
): AsyncGenerator<StoredRunEvent> {
  let after: { createdAt: number; runId: string; sequence: number } | undefined;
  for (;;) {
    const page = await store.listRunEventsInRange({
      types,
      from,
      to,
      ...(after !== undefined ? { after } : {}),
    });
    yield* page;
    const last = page.at(-1);
    if (last === undefined) return;
    after = { createdAt: last.createdAt, runId: last.runId, sequence: last.sequence };
  }
}

/**
 * A tenant's statistics over `[from, to)`, from what the run store holds: the runs that ended in the range (their
 * COMPLETED or FAILED event's telemetry, their REQUESTED event for the duration and the agent asked for, their run
 * record for the cost), and the runs accepted in it (requests per minute). Durations are measured by the store's
 * clock, from the request's acceptance to the run's end event, so runs executed by several processes compare.
 */
export async function runStatistics(
  store: RunStore,
  query: {
    readonly from: number;
    readonly to: number;
    readonly groupBy?: StatisticsGrouping;
    /** Adds `series`: the figures per bucket of this many milliseconds (the last bucket may be shorter). */
    readonly bucketMilliseconds?: number;
  },
): Promise<RunStatistics> {
  const { runs, requests, requestTimes } = await finishedRuns(store, query.from, query.to);
  const minutes = (query.to - query.from) / 60_000;
  const statistics: RunStatistics = {
    from: query.from,
    to: query.to,
    requests,
    requestsPerMinute: ratio(requests, minutes) ?? 0,
    ...figuresOf(runs),
  };
  const grouping = query.groupBy;
  const bucket = query.bucketMilliseconds;
  const series: RunStatisticsBucket[] | undefined =
    bucket === undefined
      ? undefined
      : bucketStarts(query.from, query.to, bucket).map((start) => {
          const end = Math.min(start + bucket, query.to);
          const inBucket = runs.filter((run) => run.endedAt >= start && run.endedAt < end);
          return {
            from: start,
            to: end,
            requests: requestTimes.filter((time) => time >= start && time < end).length,
            ...figuresOf(inBucket),
            ...(grouping !== undefined ? { groups: groupsOf(inBucket, grouping) } : {}),
          };
        });
  return {
    ...statistics,
    ...(grouping !== undefined ? { groups: groupsOf(runs, grouping) } : {}),
    ...(series !== undefined ? { series } : {}),
  };
}

function bucketStarts(from: number, to: number, bucket: number): number[] {
  const starts: number[] = [];
  for (let start = from; start < to; start += bucket) starts.push(start);
  return starts;
}

function groupsOf(
  runs: readonly FinishedRun[],
  grouping: StatisticsGrouping,
): ({ readonly key: string } & RunStatisticsFigures)[] {
  const keys = [...new Set(runs.map((run) => run[grouping]))].sort((left, right) =>
    left.localeCompare(right),
  );
  return keys.map((key) => ({ key, ...figuresOf(runs.filter((run) => run[grouping] === key)) }));
}

/** The runs that ended in `[from, to)` and the number of runs accepted in it, from the tenant's stored events. */
export async function finishedRuns(
  store: RunStore,
  from: number,
  to: number,
): Promise<{
  readonly runs: readonly FinishedRun[];
  readonly requests: number;
  /** When each run accepted in the range was accepted. */
  readonly requestTimes: readonly number[];
}> {
  const query = { from, to };
  const runs: FinishedRun[] = [];
  let requests = 0;
  const requestTimes: number[] = [];
  for await (const event of eventsInRange(
    store,
    ["REQUESTED", "COMPLETED", "FAILED"],
    query.from,
    query.to,
  )) {
    if (event.type === "REQUESTED") {
      requests += 1;
      requestTimes.push(event.createdAt);
      continue;
    }
    const requested = (await store.readRunEvents(event.runId, { limit: 1 }))[0];
    const record = await store.getRun(event.runId);
    const data = event.data;
    const intent = (data.intent ?? {}) as { intent?: unknown };
    const usage = (data.token_usage ?? {}) as { prompt_tokens?: unknown; completion_tokens?: unknown };
    const calls = Array.isArray(data.tool_calls) ? (data.tool_calls as { cache_hit?: unknown }[]) : [];
    runs.push({
      provider: text(data.provider) ?? unknown,
      model: text(data.model) ?? unknown,
      agent: text(intent.intent) ?? text(requested?.data.agent) ?? unknown,
      status: event.type === "COMPLETED" ? "completed" : data.cancelled === true ? "cancelled" : "failed",
      durationMilliseconds: Math.max(0, event.createdAt - (requested?.createdAt ?? event.createdAt)),
      promptTokens: number(usage.prompt_tokens),
      completionTokens: number(usage.completion_tokens),
      costUsd: record?.totals.costUsd ?? 0,
      toolCalls: calls.length,
      cacheHits: calls.filter((call) => call.cache_hit === true).length,
      cacheMisses: calls.filter((call) => call.cache_hit === false).length,
      failover: data.final_state === "failover",
      endedAt: event.createdAt,
    });
  }
  return { runs, requests, requestTimes };
}
