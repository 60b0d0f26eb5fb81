import { afterEach, describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../src/testing/scripted-openai-server.js";
import { type RunningServer, startRunningServer } from "./run-project.js";
import { testBackends } from "./server-harness.js";

let servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.reverse()) await server.close();
  servers = [];
});

function lastUserText(request: RecordedRequest): string {
  const messages = (request.body as { messages?: { role: string; content?: unknown }[] }).messages ?? [];
  const content = messages.filter((message) => message.role === "user").at(-1)?.content;
  return typeof content === "string" ? content : JSON.stringify(content ?? "");
}

describe.each(testBackends)("GET /v1/stats on %s", (backend) => {
  it("counts the tenant's runs executed through the API: statuses, providers, durations, tokens, error rates; another tenant sees none", async () => {
    let api: RunningServer | null = null;
    // Each model call takes the time its prompt names, on the server's clock; "fail" answers 400 (not retried).
    const server = await startRunningServer(backend, (request) => {
      const prompt = lastUserText(request);
      api?.environment.advance(Number(/ms=(\d+)/.exec(prompt)?.[1] ?? 0));
      if (prompt.includes("fail")) return { kind: "error", status: 400 };
      return { kind: "text", text: "done", usage: { prompt_tokens: 100, completion_tokens: 20 } };
    });
    api = server;
    servers.push(server);
    const operator = await server.key("acme", "operator", "ada");
    for (const prompt of ["ms=1000", "ms=3000", "ms=2000", "fail ms=4000"]) {
      const ran = await server.request("POST", "/v1/runs", {
        key: operator,
        body: { agent: "helper", prompt, wait: true },
      });
      expect(ran.status).toBe(200);
    }
    const viewer = await server.key("acme", "viewer", "vic");
    const range = "from=2026-01-01T00:00:00Z&to=2026-01-01T01:00:00Z";
    const stats = await server.request("GET", `/v1/stats?${range}`, { key: viewer });
    expect(stats.status).toBe(200);
    // The failing run's model was asked three times (each 4 s on the clock) before the run failed.
    const figures = {
      runs: 4,
      byStatus: { completed: 3, failed: 1 },
      byProvider: { local: 4 },
      byModel: { m: 4 },
      byAgent: { helper: 4 },
      durationMs: { average: 4500, p95: 12000 },
      tokens: { prompt: 300, completion: 60, total: 360 },
      costUsd: 0,
      toolCalls: { total: 0, perRun: 0 },
      cache: { hits: 0, misses: 0, hitRatio: null },
      errorRateByProvider: { local: 0.25 },
      failovers: 0,
    };
    expect(stats.body).toEqual({
      from: "2026-01-01T00:00:00.000Z",
      to: "2026-01-01T01:00:00.000Z",
      requests: 4,
      requestsPerMinute: 0.066667,
      ...figures,
      // No budget is configured for the tenant.
      budgets: [],
    });
    const grouped = await server.request("GET", `/v1/stats?${range}&groupBy=status`, { key: viewer });
    expect(grouped.body.groups).toEqual([
      {
        key: "completed",
        ...figures,
        runs: 3,
        byStatus: { completed: 3 },
        byProvider: { local: 3 },
        byModel: { m: 3 },
        byAgent: { helper: 3 },
        durationMs: { average: 2000, p95: 3000 },
        errorRateByProvider: { local: 0 },
      },
      {
        key: "failed",
        ...figures,
        runs: 1,
        byStatus: { failed: 1 },
        byProvider: { local: 1 },
        byModel: { m: 1 },
        byAgent: { helper: 1 },
        durationMs: { average: 12000, p95: 12000 },
        tokens: { prompt: 0, completion: 0, total: 0 },
        errorRateByProvider: { local: 1 },
      },
    ]);
    // A range that holds none of them, and another tenant, see nothing.
    const before = await server.request(
      "GET",
      "/v1/stats?from=2025-12-31T00:00:00Z&to=2026-01-01T00:00:00Z",
      { key: viewer },
    );
    expect(before.body).toMatchObject({ runs: 0, requests: 0, byStatus: {}, durationMs: { average: null } });
    const globex = await server.request("GET", `/v1/stats?${range}`, {
      key: await server.key("globex", "admin", "ada"),
    });
    expect(globex.body).toMatchObject({ runs: 0, requests: 0, byProvider: {}, tokens: { total: 0 } });
    // A range that ends before it starts, or is no date, is refused.
    const backwards = await server.request(
      "GET",
      "/v1/stats?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z",
      { key: viewer },
    );
    expect(backwards.status).toBe(400);
    expect(backwards.body.error.code).toBe("REQUEST_INVALID");
    expect((await server.request("GET", "/v1/stats?from=yesterday", { key: viewer })).status).toBe(400);
    expect((await server.request("GET", "/v1/stats?groupBy=colour", { key: viewer })).status).toBe(400);
    expect((await server.request("GET", "/v1/stats", { key: null })).status).toBe(401);

    // The same runs as Prometheus metrics, for a scrape with the tenant's key.
    const metrics = await fetch(`${server.address}/metrics`, {
      headers: { authorization: `Bearer ${viewer}` },
    });
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const samples = (await metrics.text()).split("\n").filter((line) => line !== "" && !line.startsWith("#"));
    expect(samples).toEqual([
      "charter_run_requests_total 4",
      'charter_runs_total{agent="helper",provider="local",model="m",status="completed"} 3',
      'charter_runs_total{agent="helper",provider="local",model="m",status="failed"} 1',
      'charter_run_duration_milliseconds{quantile="0.95"} 12000',
      "charter_run_duration_milliseconds_sum 18000",
      "charter_run_duration_milliseconds_count 4",
      'charter_tokens_total{kind="prompt"} 300',
      'charter_tokens_total{kind="completion"} 60',
      "charter_cost_usd_total 0",
      "charter_tool_calls_total 0",
      'charter_tool_cache_lookups_total{result="hit"} 0',
      'charter_tool_cache_lookups_total{result="miss"} 0',
      "charter_failovers_total 0",
    ]);
    const globexMetrics = await fetch(`${server.address}/metrics`, {
      headers: { authorization: `Bearer ${await server.key("globex", "viewer")}` },
    });
    expect(await globexMetrics.text()).toContain("charter_run_requests_total 0\n");
    expect((await fetch(`${server.address}/metrics`)).status).toBe(401);
  });
});
