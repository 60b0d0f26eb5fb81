import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defaultViewerDirectory, viewerContentSecurityPolicy } from "../../src/server/http/viewer-routes.js";
import type { RecordedRequest } from "../../src/testing/scripted-openai-server.js";
import { segmentTampering, sqliteSegmentTable } from "../store/segment-tampering.js";
import { eventually } from "./execution-harness.js";
import { type RunningServer, startRunningServer } from "./run-project.js";
import { testBackends } from "./server-harness.js";

let servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.reverse()) await server.close();
  servers = [];
});

async function running(
  backend: (typeof testBackends)[number],
  respond: Parameters<typeof startRunningServer>[1],
) {
  const server = await startRunningServer(backend, respond);
  servers.push(server);
  return server;
}

function hasToolResult(request: RecordedRequest): boolean {
  const messages = (request.body as { messages?: { role: string }[] }).messages ?? [];
  return messages.some((message) => message.role === "tool");
}

function recordThenReport(request: RecordedRequest) {
  return hasToolResult(request)
    ? { kind: "text" as const, text: "recorded it", usage: { prompt_tokens: 50, completion_tokens: 5 } }
    : {
        kind: "tool_calls" as const,
        calls: [{ id: "call_record", name: "test__record", arguments: { key: "order", value: "42" } }],
        usage: { prompt_tokens: 40, completion_tokens: 4 },
      };
}

describe.each(testBackends)("the run viewer's API on %s", (backend) => {
  it("timeline, contract and verification of a run; GET /v1/session; another tenant gets 404s and a recorded violation", async () => {
    const api = await running(backend, recordThenReport);
    const operator = await api.key("acme", "operator", "ada");
    const started = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "recorder", prompt: "Record order 42.", wait: true },
    });
    const runId = started.body.runId as string;
    expect(started.body.status).toBe("awaiting_approval");
    const waiting = await api.request("GET", `/v1/runs/${runId}/timeline`, { key: operator });
    expect(waiting.status).toBe(200);
    expect(waiting.body.turns).toHaveLength(1);
    expect(waiting.body.turns[0].toolCalls).toEqual([
      {
        turn: 1,
        callId: "call_record",
        tool: "test__record",
        arguments: { key: "order", value: "42" },
        status: "awaiting_approval",
        durationMs: null,
        resultPreview: null,
        errorCode: null,
        cacheHit: null,
      },
    ]);

    await api.request("POST", `/v1/runs/${runId}/approvals`, {
      key: operator,
      body: { callId: "call_record", decision: "approve" },
    });
    await eventually("the approved run to finish", async () => {
      const run = await api.request("GET", `/v1/runs/${runId}`, { key: operator });
      return run.body.lifecycle === "COMPLETED";
    });
    const viewer = await api.key("acme", "viewer", "vic");
    const timeline = await api.request("GET", `/v1/runs/${runId}/timeline`, { key: viewer });
    expect(timeline.status).toBe(200);
    const accounting = await api.store.forTenant("acme").readAccounting(runId);
    const toolLatency = accounting.find((entry) => entry.type === "tool")?.latency;
    expect(timeline.body).toEqual({
      runId,
      turns: [
        {
          turn: 1,
          modelCalls: [
            expect.objectContaining({
              turn: 1,
              target: "local/m",
              attempt: 1,
              status: "ok",
              tokens: { input: 40, output: 4 },
              costUsd: null,
              retry: false,
              failover: false,
            }),
          ],
          toolCalls: [
            {
              turn: 1,
              callId: "call_record",
              tool: "test__record",
              arguments: { key: "order", value: "42" },
              status: "ok",
              durationMs: toolLatency,
              // What the tool answered, not the stored envelope around it.
              resultPreview: "recorded",
              errorCode: null,
              cacheHit: null,
            },
          ],
        },
        {
          turn: 2,
          modelCalls: [
            expect.objectContaining({ target: "local/m", status: "ok", tokens: { input: 50, output: 5 } }),
          ],
          toolCalls: [],
        },
      ],
    });

    const contract = await api.request("GET", `/v1/runs/${runId}/contract`, { key: viewer });
    const stored = await api.store.forTenant("acme").getRun(runId);
    expect(contract.status).toBe(200);
    expect(contract.body).toEqual({ runId, contractHash: stored?.contractHash, contract: stored?.contract });

    const verification = await api.request("GET", `/v1/runs/${runId}/verification`, { key: viewer });
    expect(verification.body).toEqual({
      runId,
      ok: true,
      entries: stored?.entryCount,
      headHash: stored?.headHash,
      firstBadEntry: null,
    });

    expect((await api.request("GET", "/v1/session", { key: viewer })).body).toEqual({
      tenantId: "acme",
      userId: "vic",
      role: "viewer",
      permissions: ["runs.read", "stats.read"],
      readOnly: false,
    });
    expect((await api.request("GET", "/v1/session", { key: operator })).body.permissions).toEqual([
      "runs.read",
      "runs.start",
      "runs.cancel",
      "runs.approve",
      "stats.read",
    ]);
    expect((await api.request("GET", "/v1/session")).status).toBe(401);

    const globex = await api.key("globex", "admin", "mallory");
    for (const route of ["timeline", "contract", "verification"]) {
      const foreign = await api.request("GET", `/v1/runs/${runId}/${route}`, { key: globex });
      const missing = await api.request("GET", `/v1/runs/run_missing/${route}`, { key: globex });
      expect(foreign.status).toBe(404);
      expect({ ...foreign.body.error, message: "", details: {} }).toEqual({
        ...missing.body.error,
        message: "",
        details: {},
      });
    }
    const events = await api.store.forTenant("globex").listSecurityEvents();
    expect(events.map((event) => event.details.route)).toEqual([
      "/v1/runs/:id/timeline",
      "/v1/runs/:id/contract",
      "/v1/runs/:id/verification",
    ]);
  });

  it("GET /v1/stats?bucketMinutes: the same figures per bucket of the range, oldest first", async () => {
    let server: RunningServer | null = null;
    // Each model call takes the time its prompt names on the server's clock; "fail" answers 400.
    const api = await running(backend, (request) => {
      const messages = (request.body as { messages?: { role: string; content?: unknown }[] }).messages ?? [];
      const prompt = String(messages.filter((message) => message.role === "user").at(-1)?.content ?? "");
      server?.environment.advance(Number(/ms=(\d+)/.exec(prompt)?.[1] ?? 0));
      if (prompt.includes("fail")) return { kind: "error", status: 400 };
      return { kind: "text", text: "done", usage: { prompt_tokens: 10, completion_tokens: 2 } };
    });
    server = api;
    const operator = await api.key("acme", "operator");
    // Ends at 0:01; requested at 0:01 and ends at 1:31; requested at 1:31 and fails at 3:01 (3 attempts of 30 s).
    for (const prompt of ["ms=1000", "ms=90000", "fail ms=30000"]) {
      await api.request("POST", "/v1/runs", { key: operator, body: { agent: "helper", prompt, wait: true } });
    }
    const range = "from=2026-01-01T00:00:00Z&to=2026-01-01T00:05:00Z";
    const stats = await api.request("GET", `/v1/stats?${range}&bucketMinutes=1&groupBy=agent`, {
      key: operator,
    });
    expect(stats.status).toBe(200);
    expect(stats.body.runs).toBe(3);
    const series = stats.body.series as Record<string, unknown>[];
    expect(series.map((bucket) => [bucket.from, bucket.to, bucket.requests, bucket.runs])).toEqual([
      ["2026-01-01T00:00:00.000Z", "2026-01-01T00:01:00.000Z", 2, 1],
      ["2026-01-01T00:01:00.000Z", "2026-01-01T00:02:00.000Z", 1, 1],
      ["2026-01-01T00:02:00.000Z", "2026-01-01T00:03:00.000Z", 0, 0],
      ["2026-01-01T00:03:00.000Z", "2026-01-01T00:04:00.000Z", 0, 1],
      ["2026-01-01T00:04:00.000Z", "2026-01-01T00:05:00.000Z", 0, 0],
    ]);
    expect(series[0]).toMatchObject({
      byStatus: { completed: 1 },
      tokens: { prompt: 10, completion: 2, total: 12 },
      groups: [{ key: "helper", runs: 1, tokens: { total: 12 } }],
    });
    expect(series[3]).toMatchObject({ byStatus: { failed: 1 }, errorRateByProvider: { local: 1 } });
    expect(series[2]).toMatchObject({ groups: [], errorRateByProvider: {} });
    // Without bucketMinutes the answer is as before: no series.
    expect((await api.request("GET", `/v1/stats?${range}`, { key: operator })).body.series).toBeUndefined();
    const tooMany = await api.request(
      "GET",
      "/v1/stats?from=2026-01-01T00:00:00Z&to=2026-01-03T00:00:00Z&bucketMinutes=1",
      {
        key: operator,
      },
    );
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.code).toBe("REQUEST_INVALID");
    // Another tenant's series counts nothing of these runs.
    const other = await api.request("GET", `/v1/stats?${range}&bucketMinutes=1`, {
      key: await api.key("globex", "viewer"),
    });
    expect(
      other.body.series.map((bucket: { runs: number; requests: number }) => bucket.runs + bucket.requests),
    ).toEqual([0, 0, 0, 0, 0]);
  });
});

describe("the run viewer's page", () => {
  it("GET / answers the page without credentials, with a strict Content-Security-Policy; assets are cached for a year", async () => {
    const api = await running("sqlite", () => ({ kind: "text", text: "done" }));
    const page = await fetch(`${api.address}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toBe(viewerContentSecurityPolicy);
    expect(viewerContentSecurityPolicy).toContain("script-src 'self'");
    expect(viewerContentSecurityPolicy).not.toContain("unsafe");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    const html = await page.text();
    const assets = [...html.matchAll(/\/assets\/([\w.-]+)/g)].map((match) => match[1] as string);
    expect(assets).toEqual([
      expect.stringMatching(/^style-\w+\.css$/),
      expect.stringMatching(/^viewer-\w+\.js$/),
    ]);
    // No inline script or style: everything the page runs comes from its own hashed files.
    expect(html).not.toMatch(/<script>|<style|style=/);
    for (const asset of assets) {
      const answer = await fetch(`${api.address}/assets/${asset}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(answer.headers.get("content-type")).toMatch(
        asset.endsWith(".js") ? /^text\/javascript/ : /^text\/css/,
      );
    }
    expect((await fetch(`${api.address}/assets/viewer-NOPE.js`)).status).toBe(404);
    // The page is not part of the API's description.
    const openapi = (await (await fetch(`${api.address}/openapi.json`)).json()) as { paths: object };
    expect(Object.keys(openapi.paths)).not.toContain("/");
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining(["/v1/runs/{id}/verification", "/v1/runs/{id}/timeline", "/v1/session"]),
    );
  });

  it("the bundle (script and style sheet) is under 200 KB", () => {
    const assets = join(defaultViewerDirectory(), "assets");
    const total = readdirSync(assets).reduce((sum, name) => sum + statSync(join(assets, name)).size, 0);
    expect(total).toBeGreaterThan(10_000);
    expect(total).toBeLessThan(200 * 1024);
  });

  it("a tampered stored transcript fails verification at the entry changed", async () => {
    const api = await running("sqlite", () => ({ kind: "text", text: "done" }));
    const operator = await api.key("acme", "operator");
    const done = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "helper", prompt: "Hi", wait: true },
    });
    const runId = done.body.runId as string;
    const tampering = segmentTampering(sqliteSegmentTable(api.storeUrl.replace(/^sqlite:/, "")));
    const line = await tampering.entryLine(runId, 1);
    await tampering.replaceEntryLine(runId, 1, line.replace('"status":"native"', '"status":"forged"'));
    const verification = await api.request("GET", `/v1/runs/${runId}/verification`, { key: operator });
    expect(verification.status).toBe(200);
    expect(verification.body).toMatchObject({
      ok: false,
      entries: 1,
      firstBadEntry: { seq: 1, stepId: "turn-1/infer-1", reason: "RESULT_HASH_MISMATCH" },
    });
  });
});
