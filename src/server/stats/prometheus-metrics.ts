import type { RunStore } from "../../store/run-store.js";
import { type FinishedRun, finishedRuns } from "./run-statistics.js";

function labelValue(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}

function labels(values: Readonly<Record<string, string>>): string {
  const entries = Object.entries(values);
  if (entries.length === 0) return "";
  return `{${entries.map(([name, value]) => `${name}="${labelValue(value)}"`).join(",")}}`;
}

/**
 * A tenant's run metrics in the Prometheus text format (version 0.0.4), counted from every run the store holds
 * for it: counters are computed from the stored events at each scrape, so they agree across server processes and
 * never reset when a process restarts.
 */
export async function prometheusMetrics(store: RunStore, now: number): Promise<string> {
  const { runs, requests } = await finishedRuns(store, 0, now + 1);
  const lines: string[] = [];
  const family = (name: string, type: string, help: string) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  };
  const sum = (pick: (run: FinishedRun) => number) => runs.reduce((total, run) => total + pick(run), 0);

  family("charter_run_requests_total", "counter", "Runs accepted.");
  lines.push(`charter_run_requests_total ${requests}`);

  family("charter_runs_total", "counter", "Runs that ended, by agent, provider, model and status.");
  const combinations = new Map<string, { key: Record<string, string>; count: number }>();
  for (const run of runs) {
    const key = { agent: run.agent, provider: run.provider, model: run.model, status: run.status };
    const text = labels(key);
    const existing = combinations.get(text);
    if (existing === undefined) combinations.set(text, { key, count: 1 });
    else existing.count += 1;
  }
  for (const text of [...combinations.keys()].sort()) {
    lines.push(`charter_runs_total${text} ${combinations.get(text)?.count ?? 0}`);
  }

  family("charter_run_duration_milliseconds", "summary", "From a run's acceptance to its end.");
  const durations = runs.map((run) => run.durationMilliseconds).sort((left, right) => left - right);
  if (durations.length > 0) {
    lines.push(
      `charter_run_duration_milliseconds{quantile="0.95"} ${durations[Math.ceil(0.95 * durations.length) - 1]}`,
    );
  }
  lines.push(`charter_run_duration_milliseconds_sum ${sum((run) => run.durationMilliseconds)}`);
  lines.push(`charter_run_duration_milliseconds_count ${durations.length}`);

  family("charter_tokens_total", "counter", "Model tokens of ended runs.");
  lines.push(`charter_tokens_total{kind="prompt"} ${sum((run) => run.promptTokens)}`);
  lines.push(`charter_tokens_total{kind="completion"} ${sum((run) => run.completionTokens)}`);

  family("charter_cost_usd_total", "counter", "Cost of ended runs, where their model prices are known.");
  lines.push(`charter_cost_usd_total ${Math.round(sum((run) => run.costUsd) * 1e6) / 1e6}`);

  family("charter_tool_calls_total", "counter", "Tool calls of ended runs.");
  lines.push(`charter_tool_calls_total ${sum((run) => run.toolCalls)}`);

  family("charter_tool_cache_lookups_total", "counter", "Calls of cacheable read-only tools, by result.");
  lines.push(`charter_tool_cache_lookups_total{result="hit"} ${sum((run) => run.cacheHits)}`);
  lines.push(`charter_tool_cache_lookups_total{result="miss"} ${sum((run) => run.cacheMisses)}`);

  family(
    "charter_failovers_total",
    "counter",
    "Runs that succeeded on another target than one that failed them.",
  );
  lines.push(`charter_failovers_total ${runs.filter((run) => run.failover).length}`);
  return `${lines.join("\n")}\n`;
}
