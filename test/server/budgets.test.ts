import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { acceptRunRequest } from "../../src/server/execution/accept-run-request.js";
import { executeRunRequest } from "../../src/server/execution/execute-run-request.js";
import { checkTenantBudgets } from "../../src/server/limits/tenant-budgets.js";
import { verifyStoredRun } from "../../src/store/verify-stored-run.js";
import {
  executionContext,
  postgresTestStore,
  postgresTestUrl,
  reportStep,
  runRequest,
  type ServerWorkspace,
  serverWorkspace,
  sqliteTestStore,
  type TestStore,
  toolAnswers,
} from "./execution-harness.js";
import { type RunningServer, startRunningServer } from "./run-project.js";
import { testBackends } from "./server-harness.js";

let workspace: ServerWorkspace | null = null;
let testStore: TestStore | null = null;
let api: RunningServer | null = null;

afterEach(async () => {
  await testStore?.dispose();
  testStore = null;
  await workspace?.close();
  workspace = null;
  await api?.close();
  api = null;
});

const backends = postgresTestUrl === "" ? ["sqlite"] : ["sqlite", "postgres"];

/** Each model answer costs 100 prompt and 20 completion tokens: reads two items, one a turn, then reports. */
const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };

async function twoReadsThenReport(): Promise<ServerWorkspace> {
  workspace = await serverWorkspace({
    respond: (request) => {
      const answered = toolAnswers(request);
      if (answered >= 2) return { ...reportStep("read both"), usage };
      return {
        kind: "tool_calls",
        calls: [{ id: `call_${answered}`, name: "rest__read", arguments: { key: `item${answered}` } }],
        usage,
      };
    },
  });
  return workspace;
}

async function refusal(check: Promise<void>): Promise<CharterError> {
  const error = await check.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  if (!CharterError.isInstance(error)) throw new Error(`expected a CharterError, got ${String(error)}`);
  return error;
}

describe.each(backends)("tenant budgets in server runs on %s", (backend) => {
  it("stops a run before its next model call once the tenant's tokens for the day are spent (typed FAILED, verifiable), counts every call, and renews the next UTC day", async () => {
    const space = await twoReadsThenReport();
    testStore = backend === "sqlite" ? await sqliteTestStore(space.directory) : await postgresTestStore();
    // 23:00 UTC: the day ends in an hour.
    const environment = deterministicEnvironment({ start: Date.UTC(2026, 10, 26, 23, 0, 0) });
    const budgets = { tokens: { limit: 200, period: "day" as const } };
    const context = executionContext(space, testStore.store, { environment, budgets });
    const acme = testStore.store.forTenant("acme");
    const dayStart = Date.UTC(2026, 10, 26);
    const today = { from: dayStart, to: dayStart + 86_400_000 };

    const request = runRequest();
    await acceptRunRequest(request, context);
    const outcome = await executeRunRequest(request, context);
    // Two model calls went ahead (0, then 120 tokens used of 200); the third was refused with 240 used.
    expect(outcome.status).toBe("failed");
    expect(space.model.requests).toHaveLength(2);
    expect(space.tools.requests.map((sent) => sent.path)).toEqual(["/items/item0", "/items/item1"]);
    expect(outcome.result).toMatchObject({
      outcome: "FAILED_BUDGET_EXHAUSTED",
      error: { code: "TENANT_BUDGET_EXHAUSTED" },
    });
    expect(outcome.result?.error?.message).toMatch(
      /^the tenant's token budget for the day is spent: 240 used of 200; it renews at 2026-11-27T00:00:00.000Z/,
    );
    const events = await acme.readRunEvents(request.runId);
    expect(events.at(-1)).toMatchObject({
      type: "FAILED",
      data: {
        outcome: "FAILED_BUDGET_EXHAUSTED",
        final_state: "error",
        error: { code: "TENANT_BUDGET_EXHAUSTED", class: "rate_limit_exceeded" },
        token_usage: { total_tokens: 240 },
      },
    });
    // The final report is still written and the stored transcript still verifies.
    expect(outcome.result?.finalReport).toMatchObject({ status: "failure", source: "synthetic" });
    expect((await verifyStoredRun(acme, request.runId)).ok).toBe(true);
    expect(await acme.readBudgetUsage(today)).toEqual({ tokens: 240, costUsd: 0 });

    // No run starts until the day ends: 429-style refusal naming the budget, Retry-After an hour.
    const refused = await refusal(
      checkTenantBudgets({ store: testStore.store, tenantId: "acme", environment, serverBudgets: budgets }),
    );
    expect(refused.code).toBe("TENANT_BUDGET_EXHAUSTED");
    expect(refused.details).toEqual({
      budget: "tokens",
      limit: 200,
      used: 240,
      period: "day",
      periodEnd: "2026-11-27T00:00:00.000Z",
      retryAfterSeconds: 3600,
      budgets: ["tokens"],
    });
    // Another tenant has its own usage; a tenant whose configuration sets no token budget is not limited by the
    // server's; one whose configuration sets a larger one has room.
    await checkTenantBudgets({
      store: testStore.store,
      tenantId: "globex",
      environment,
      serverBudgets: budgets,
    });
    await acme.putTenantConfiguration({ budgets: { tokens: null } }, environment.now());
    await checkTenantBudgets({
      store: testStore.store,
      tenantId: "acme",
      environment,
      serverBudgets: budgets,
    });
    await acme.putTenantConfiguration(
      { budgets: { tokens: { limit: 1000, period: "month" } } },
      environment.now(),
    );
    await checkTenantBudgets({
      store: testStore.store,
      tenantId: "acme",
      environment,
      serverBudgets: budgets,
    });
    await acme.putTenantConfiguration({}, environment.now());

    // Midnight UTC: a new day, a new budget (the run is stopped again once its 200 tokens are spent); the month
    // holds both days.
    environment.advance(3_600_000);
    await checkTenantBudgets({
      store: testStore.store,
      tenantId: "acme",
      environment,
      serverBudgets: budgets,
    });
    const next = runRequest();
    await acceptRunRequest(next, context);
    expect((await executeRunRequest(next, context)).status).toBe("failed");
    expect(space.model.requests).toHaveLength(4);
    expect(await acme.readBudgetUsage({ from: today.to, to: today.to + 86_400_000 })).toEqual({
      tokens: 240,
      costUsd: 0,
    });
    expect(await acme.readBudgetUsage({ from: Date.UTC(2026, 10, 1), to: Date.UTC(2026, 11, 1) })).toEqual({
      tokens: 480,
      costUsd: 0,
    });
  });

  it("counts the cost from the configured pricing against a monthly cost budget", async () => {
    const space = await twoReadsThenReport();
    testStore = backend === "sqlite" ? await sqliteTestStore(space.directory) : await postgresTestStore();
    const environment = deterministicEnvironment({ start: Date.UTC(2026, 10, 30, 12, 0, 0) });
    // 100 prompt tokens at $1,000/M and 20 completion tokens at $5,000/M: $0.2 a call.
    const pricing = { local: { m: { input: 1000, output: 5000 } } };
    const { readFile, writeFile } = await import("node:fs/promises");
    const { join } = await import("node:path");
    const file = join(space.directory, ".charter.json");
    await writeFile(file, JSON.stringify({ ...JSON.parse(await readFile(file, "utf8")), pricing }));
    const budgets = { costUsd: { limit: 0.5, period: "month" as const } };
    const context = executionContext(space, testStore.store, { environment, budgets });
    const request = runRequest();
    await acceptRunRequest(request, context);
    const outcome = await executeRunRequest(request, context);
    // $0.2, $0.4, $0.6: the fourth call would start past the limit, and the run needed only three.
    expect(outcome.status).toBe("completed");
    const acme = testStore.store.forTenant("acme");
    const month = { from: Date.UTC(2026, 10, 1), to: Date.UTC(2026, 11, 1) };
    const used = await acme.readBudgetUsage(month);
    expect(used.tokens).toBe(360);
    expect(used.costUsd).toBeCloseTo(0.6, 10);
    const refused = await refusal(
      checkTenantBudgets({ store: testStore.store, tenantId: "acme", environment, serverBudgets: budgets }),
    );
    expect(refused.details).toMatchObject({
      budget: "costUsd",
      limit: 0.5,
      period: "month",
      periodEnd: "2026-12-01T00:00:00.000Z",
      retryAfterSeconds: 12 * 3600,
    });
    // The next run is stopped before its first model call.
    const stopped = runRequest();
    await acceptRunRequest(stopped, context);
    expect(await executeRunRequest(stopped, context)).toMatchObject({
      status: "failed",
      result: { outcome: "FAILED_BUDGET_EXHAUSTED", error: { code: "TENANT_BUDGET_EXHAUSTED" } },
    });
    expect(space.model.requests).toHaveLength(3);
  });
});

describe.each(testBackends)("budgets at the API on %s", (backend) => {
  it("POST /v1/runs and /v1/chat/completions answer 429 TENANT_BUDGET_EXHAUSTED with Retry-After until the period ends, queueing nothing", async () => {
    api = await startRunningServer(backend, () => ({ kind: "text", text: "fine" }), {
      configuration: { budgets: { tokens: { limit: 1000, period: "day" } } },
    });
    const server = api;
    const operator = await server.key("acme", "operator", "ann");
    // The server's clock starts at 2026-01-01T00:00:00Z; 18 h later, the tenant's runs used 1,000 tokens today.
    server.environment.advance(18 * 3_600_000);
    await server.store
      .forTenant("acme")
      .addBudgetUsage({ dayStart: Date.UTC(2026, 0, 1), tokens: 1000, costUsd: 0 });

    const started = await server.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "helper", prompt: "Hello" },
    });
    expect(started.status).toBe(429);
    expect(started.headers.get("retry-after")).toBe(String(6 * 3600));
    expect(started.body.error).toMatchObject({
      code: "TENANT_BUDGET_EXHAUSTED",
      class: "rate_limit_exceeded",
      details: {
        budget: "tokens",
        limit: 1000,
        used: 1000,
        period: "day",
        periodEnd: "2026-01-02T00:00:00.000Z",
        retryAfterSeconds: 6 * 3600,
      },
    });
    const chat = await server.request("POST", "/v1/chat/completions", {
      key: operator,
      body: { model: "helper", messages: [{ role: "user", content: "Hello" }] },
    });
    expect(chat.status).toBe(429);
    expect(chat.body.error.code).toBe("TENANT_BUDGET_EXHAUSTED");
    expect(chat.headers.get("retry-after")).toBe(String(6 * 3600));
    // The tenant sees where its budgets stand.
    const stats = await server.request("GET", "/v1/stats", { key: operator });
    expect(stats.body.budgets).toEqual([
      {
        budget: "tokens",
        limit: 1000,
        period: "day",
        used: 1000,
        periodStart: "2026-01-01T00:00:00.000Z",
        periodEnd: "2026-01-02T00:00:00.000Z",
        exhausted: true,
      },
    ]);
    const metrics = await fetch(`${server.address}/metrics`, {
      headers: { authorization: `Bearer ${operator}` },
    });
    const text = await metrics.text();
    expect(text).toContain('charter_budget_used{budget="tokens",period="day"} 1000\n');
    expect(text).toContain('charter_budget_limit{budget="tokens",period="day"} 1000\n');
    // Nothing was accepted or run.
    expect((await server.request("GET", "/v1/runs", { key: operator })).body.runs).toEqual([]);
    expect(server.model.requests).toEqual([]);

    // Another tenant runs.
    const globex = await server.key("globex", "operator", "gus");
    const other = await server.request("POST", "/v1/runs", {
      key: globex,
      body: { agent: "helper", prompt: "Hello", wait: true },
    });
    expect(other.status).toBe(200);
    expect(other.body.status).toBe("completed");

    // The next UTC day the tenant's runs start again.
    server.environment.advance(6 * 3_600_000);
    const renewed = await server.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "helper", prompt: "Hello", wait: true },
    });
    expect(renewed.status).toBe(200);
    expect(renewed.body.status).toBe("completed");
  });
});

describe.each(testBackends)("budgets at the workflow API on %s", (backend) => {
  it("POST /v1/workflows/runs is refused once the budget is spent; a retry of a run accepted before still answers with it", async () => {
    const workflows = await mkdtemp(join(tmpdir(), "charter-budget-workflows-"));
    try {
      await writeFile(
        join(workflows, "notes.workflow.yaml"),
        ["id: notes", "steps:", "  - { id: gather, agent: helper, prompt: 'List things' }"].join("\n"),
      );
      api = await startRunningServer(
        backend,
        () => ({ kind: "text", text: "fine" }),
        { configuration: { workflows, budgets: { costUsd: { limit: 2, period: "month" } } } },
        { workflowsDirectory: workflows },
      );
      const server = api;
      const operator = await server.key("acme", "operator", "ann");
      const start = (idempotencyKey: string) =>
        server.request("POST", "/v1/workflows/runs", {
          key: operator,
          body: { workflow: "notes" },
          headers: { "idempotency-key": idempotencyKey },
        });
      const first = await start("notes-1");
      expect(first.status).toBe(202);
      // The month's cost reaches the limit (the server's clock: January 2026).
      await server.store
        .forTenant("acme")
        .addBudgetUsage({ dayStart: Date.UTC(2026, 0, 1), tokens: 0, costUsd: 2 });
      const retried = await start("notes-1");
      expect(retried.status).toBe(202);
      expect(retried.body.runId).toBe(first.body.runId);
      const refused = await start("notes-2");
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({
        code: "TENANT_BUDGET_EXHAUSTED",
        class: "rate_limit_exceeded",
        details: {
          budget: "costUsd",
          limit: 2,
          used: 2,
          period: "month",
          periodEnd: "2026-02-01T00:00:00.000Z",
        },
      });
      expect(refused.headers.get("retry-after")).toBe(String(31 * 24 * 3600));
      // The refused request's key is free again: once the budget renews, the same key starts a run.
      server.environment.advance(31 * 24 * 3_600_000);
      const renewed = await start("notes-2");
      expect(renewed.status).toBe(202);
      expect(renewed.body.runId).not.toBe(first.body.runId);
    } finally {
      await api?.close();
      api = null;
      await rm(workflows, { recursive: true, force: true });
    }
  });
});

describe("budgets inside a workflow run", () => {
  it("a budget spent after the workflow was accepted stops its next step's model call: the step and the workflow fail, typed", async () => {
    const workflows = await mkdtemp(join(tmpdir(), "charter-budget-workflows-"));
    try {
      await writeFile(
        join(workflows, "notes.workflow.yaml"),
        ["id: notes", "steps:", "  - { id: gather, agent: helper, prompt: 'List things' }"].join("\n"),
      );
      const budgets = { tokens: { limit: 1000, period: "day" as const } };
      api = await startRunningServer(
        "sqlite",
        () => ({ kind: "text", text: "fine" }),
        { configuration: { workflows, budgets } },
        { workflowsDirectory: workflows, budgets },
      );
      const server = api;
      const operator = await server.key("acme", "operator", "ann");
      // The API's clock (January 2026) had room; the workers' day (the system clock) is spent by other runs.
      const now = Date.now();
      await server.store
        .forTenant("acme")
        .addBudgetUsage({ dayStart: now - (now % 86_400_000), tokens: 1000, costUsd: 0 });
      const started = await server.request("POST", "/v1/workflows/runs", {
        key: operator,
        body: { workflow: "notes", wait: true },
      });
      expect(started.status).toBe(200);
      expect(started.body.status).toBe("failed");
      expect(server.model.requests).toEqual([]);
      const stepRunId = started.body.steps?.[0]?.runId as string;
      expect((await server.store.forTenant("acme").getRun(stepRunId))?.errorCode).toBe(
        "TENANT_BUDGET_EXHAUSTED",
      );
    } finally {
      await api?.close();
      api = null;
      await rm(workflows, { recursive: true, force: true });
    }
  }, 120_000);
});
