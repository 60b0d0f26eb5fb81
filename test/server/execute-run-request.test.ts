import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createConfigurationCache } from "../../src/config/configuration-cache.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { acceptRunRequest } from "../../src/server/execution/accept-run-request.js";
import { continueRunRequest, executeRunRequest } from "../../src/server/execution/execute-run-request.js";
import { createRunEventHub } from "../../src/server/execution/run-event-hub.js";
import type { StoredRunEvent } from "../../src/store/run-event-records.js";
import { startScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import { localModelProvider } from "../cli/cli-harness.js";
import {
  executionContext,
  postgresTestUrl,
  reportStep,
  runRequest,
  type ServerWorkspace,
  testStoreOn,
  testWorkspace,
  toolAnswers,
  wireMessages,
} from "./execution-harness.js";

/** Reads one tool, then reports what it read. */
async function readThenReport(): Promise<ServerWorkspace> {
  return testWorkspace({
    respond: (request) =>
      toolAnswers(request) === 0
        ? {
            kind: "tool_calls",
            calls: [{ id: "call_read", name: "rest__read", arguments: { key: "alpha" } }],
          }
        : reportStep("alpha is fine"),
  });
}

function types(events: readonly StoredRunEvent[]): string[] {
  return events.map((event) => event.type);
}

async function lifecycleOfASuccessfulRun(backend: "sqlite" | "postgres") {
  const space = await readThenReport();
  const testStore = await testStoreOn(backend, space.directory);
  const hub = createRunEventHub();
  const context = executionContext(space, testStore.store, { events: hub });
  const request = runRequest({ conversationId: "conv-1" });
  const heard: number[] = [];
  const stop = hub.subscribe("acme", request.runId, (event) => heard.push(event.sequence));
  await acceptRunRequest(request, context);
  const outcome = await executeRunRequest(request, context);
  stop();
  expect(outcome.status).toBe("completed");
  const events = await testStore.store.forTenant("acme").readRunEvents(request.runId);
  expect(types(events)).toEqual(["REQUESTED", "ROUTED", "EXECUTING", "TOOL_CALL", "COMPLETED"]);
  expect(events.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5]);
  expect(heard).toEqual([1, 2, 3, 4, 5]);
  for (const event of events) {
    expect(event).toMatchObject({
      runId: request.runId,
      requestId: request.requestId,
      tenantId: "acme",
      userId: "ann",
      correlationId: request.correlationId,
      conversationId: "conv-1",
    });
  }
  expect(events[1]?.data).toMatchObject({ agent: "helper", provider: "local", model: "m", intent: null });
  expect(events[3]?.data).toMatchObject({
    tool: "rest__read",
    call_id: "call_read",
    args: { key: "alpha" },
    status: "ok",
    error_code: null,
  });
  const completed = events[4]?.data ?? {};
  expect(completed).toMatchObject({
    outcome: "COMPLETED_WITH_TOOLS",
    intent: { intent: "helper", source: "named", confidence: 1 },
    provider: "local",
    model: "m",
    retry_count: 0,
    final_state: "success",
    error: null,
    tool_calls: [
      {
        tool: "rest__read",
        args: { key: "alpha" },
        summary: "ok",
        // Looked up in the read-only cache of the tenant and role, and not found there.
        cache_hit: false,
        result_preview: expect.stringContaining("/items/alpha"),
      },
    ],
  });
  const usage = completed.token_usage as {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
  };
  expect(usage.prompt_tokens).toBeGreaterThan(0);
  expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  expect(typeof completed.latency_ms).toBe("number");
  // The correlation id reached the model endpoint and the REST tool; the run is stored for the tenant, under its id.
  for (const sent of space.model.requests)
    expect(sent.headers["x-correlation-id"]).toBe(request.correlationId);
  expect(space.tools.requests[0]?.headers["x-correlation-id"]).toBe(request.correlationId);
  expect(await testStore.store.forTenant("acme").getRun(request.runId)).toMatchObject({
    status: "completed",
    correlationId: request.correlationId,
    tenantId: "acme",
  });
  expect(await testStore.store.getRun(request.runId)).toBeNull();
  expect(await testStore.store.readRunEvents(request.runId)).toEqual([]);
}

describe("executeRunRequest", () => {
  it("records REQUESTED, ROUTED, EXECUTING, TOOL_CALL, COMPLETED with the seed's telemetry (SQLite)", async () => {
    await lifecycleOfASuccessfulRun("sqlite");
  });

  it.skipIf(postgresTestUrl === "")("does the same on PostgreSQL", async () => {
    await lifecycleOfASuccessfulRun("postgres");
  });

  it("records FAILED with class provider_error, retries and final_state error when the model fails", async () => {
    const workspace = await testWorkspace({ respond: () => ({ kind: "error", status: 500 }) });
    const testStore = await testStoreOn("sqlite", workspace.directory);
    // The failed target rests between attempts: on a clock whose sleep returns at once.
    const context = executionContext(workspace, testStore.store, { environment: deterministicEnvironment() });
    const request = runRequest();
    await acceptRunRequest(request, context);
    expect((await executeRunRequest(request, context)).status).toBe("failed");
    const events = await testStore.store.forTenant("acme").readRunEvents(request.runId);
    expect(types(events)).toEqual(["REQUESTED", "ROUTED", "EXECUTING", "FAILED"]);
    expect(events[3]?.data).toMatchObject({
      outcome: "FAILED_BUDGET_EXHAUSTED",
      error: { code: "MODEL_ATTEMPTS_EXHAUSTED", class: "provider_error" },
      final_state: "error",
      retry_count: 2,
      tool_calls: [],
    });
  });

  it("refuses a call of a class the role may not call as a permission_error the model sees, never running it", async () => {
    const workspace = await testWorkspace({
      respond: (request) =>
        toolAnswers(request) === 0
          ? {
              kind: "tool_calls",
              calls: [{ id: "call_w", name: "rest__record", arguments: { key: "beta" } }],
            }
          : reportStep("could not record"),
    });
    const testStore = await testStoreOn("sqlite", workspace.directory);
    const context = executionContext(workspace, testStore.store, {
      roleToolClasses: (role) => (role === "viewer" ? ["read_only"] : ["read_only", "idempotent", "write"]),
    });
    const request = runRequest({ role: "viewer" });
    await acceptRunRequest(request, context);
    expect((await executeRunRequest(request, context)).status).toBe("completed");
    const events = await testStore.store.forTenant("acme").readRunEvents(request.runId);
    expect(events.find((event) => event.type === "TOOL_CALL")?.data).toMatchObject({
      tool: "rest__record",
      status: "failed",
      error_code: "TOOL_PERMISSION_DENIED",
      error_class: "permission_error",
    });
    expect(workspace.tools.requests).toEqual([]);
    const toolMessage = wireMessages(workspace.model.requests[1]!).find((message) => message.role === "tool");
    expect(toolMessage?.content).toContain("permission_error");
    // An operator may write: the same call runs.
    const allowed = runRequest({ role: "operator" });
    await acceptRunRequest(allowed, context);
    await executeRunRequest(allowed, context);
    expect(workspace.tools.requests.map((sent) => sent.method)).toEqual(["POST"]);
  });

  it("stops a delete for a human's decision even when the configuration pre-approves it, then continues once", async () => {
    const workspace = await testWorkspace({
      frontmatter: "\napprovedTools: [rest__remove]",
      respond: (request) =>
        toolAnswers(request) === 0
          ? {
              kind: "tool_calls",
              calls: [{ id: "call_del", name: "rest__remove", arguments: { key: "gamma", confirmed: true } }],
            }
          : reportStep("removed gamma"),
    });
    const testStore = await testStoreOn("sqlite", workspace.directory);
    const context = executionContext(workspace, testStore.store);
    const request = runRequest({ prompt: "Remove gamma, I confirm." });
    await acceptRunRequest(request, context);
    const stopped = await executeRunRequest(request, context);
    expect(stopped.status).toBe("awaiting_approval");
    expect(workspace.tools.requests).toEqual([]);
    // The same run handed out again (a queue retrying its job) is left to the execution that stored it.
    expect((await executeRunRequest(request, context)).status).toBe("suspended");
    const tenant = testStore.store.forTenant("acme");
    expect(types(await tenant.readRunEvents(request.runId))).toEqual([
      "REQUESTED",
      "ROUTED",
      "EXECUTING",
      "AWAITING_APPROVAL",
    ]);
    const decided = await continueRunRequest(
      request,
      {
        kind: "decision",
        decision: {
          runId: request.runId,
          requestId: "req_decision",
          tenantId: "acme",
          userId: "boss",
          role: "operator",
          correlationId: request.correlationId,
          approve: ["call_del"],
          deny: [],
        },
      },
      context,
    );
    expect(decided.status).toBe("completed");
    expect(workspace.tools.requests.map((sent) => `${sent.method} ${sent.path}`)).toEqual([
      "DELETE /items/gamma",
    ]);
    const events = await tenant.readRunEvents(request.runId);
    expect(events[3]?.data).toMatchObject({
      pending_approvals: [
        { callId: "call_del", tool: "rest__remove", arguments: { key: "gamma", confirmed: true } },
      ],
    });
    expect(types(events).slice(4)).toEqual(["ROUTED", "EXECUTING", "TOOL_CALL", "COMPLETED"]);
    expect(events[5]?.data).toMatchObject({ resumed: true, decided_by: "boss", approve: ["call_del"] });
  });

  it("routes `auto` through the selector and records its choice as the intent", async () => {
    const workspace = await testWorkspace({ respond: () => reportStep("looks good") });
    const testStore = await testStoreOn("sqlite", workspace.directory);
    const context = executionContext(workspace, testStore.store);
    const request = runRequest({ agent: "auto", prompt: "Please review this change to the parser." });
    await acceptRunRequest(request, context);
    await executeRunRequest(request, context);
    const events = await testStore.store.forTenant("acme").readRunEvents(request.runId);
    expect(events[1]?.data).toMatchObject({ agent: "reviewer", intent: { intent: "reviewer" } });
    expect(events.at(-1)?.data).toMatchObject({ intent: { intent: "reviewer", source: "selector" } });
    expect((events.at(-1)!.data.intent as { confidence: number }).confidence).toBeGreaterThan(0);
  });

  it("refuses an agent that is not a registry id (a path) without running anything", async () => {
    const workspace = await testWorkspace({ respond: () => reportStep("never") });
    const testStore = await testStoreOn("sqlite", workspace.directory);
    const context = executionContext(workspace, testStore.store);
    const request = runRequest({ agent: "../agents/helper.md" });
    await acceptRunRequest(request, context);
    expect((await executeRunRequest(request, context)).status).toBe("failed");
    const events = await testStore.store.forTenant("acme").readRunEvents(request.runId);
    expect(types(events)).toEqual(["REQUESTED", "FAILED"]);
    expect(events[1]?.data).toMatchObject({ error: { code: "AGENT_NOT_FOUND", class: "validation_error" } });
    expect(workspace.model.requests).toEqual([]);
  });

  it("continues a conversation with the earlier runs' messages, within the tenant only", async () => {
    const workspace = await testWorkspace({
      respond: (request) => reportStep(`answer ${wireMessages(request).length}`),
    });
    const testStore = await testStoreOn("sqlite", workspace.directory);
    const context = executionContext(workspace, testStore.store);
    const first = runRequest({ conversationId: "chat", prompt: "My name is Ann." });
    await acceptRunRequest(first, context);
    await executeRunRequest(first, context);
    const second = runRequest({ conversationId: "chat", prompt: "What is my name?" });
    await acceptRunRequest(second, context);
    await executeRunRequest(second, context);
    const third = runRequest({ conversationId: "chat", prompt: "And again?" });
    await acceptRunRequest(third, context);
    await executeRunRequest(third, context);
    // Another tenant's conversation of the same id starts afresh.
    const elsewhere = runRequest({ tenantId: "globex", conversationId: "chat", prompt: "Who am I?" });
    await acceptRunRequest(elsewhere, context);
    await executeRunRequest(elsewhere, context);
    const asText = (index: number) =>
      wireMessages(workspace.model.requests[index]!).map((message) => `${message.role}: ${message.content}`);
    expect(asText(0).slice(1)).toEqual(["user: My name is Ann."]);
    expect(asText(1).slice(1)).toEqual([
      "user: My name is Ann.",
      "assistant: answer 2",
      "user: What is my name?",
    ]);
    expect(asText(2).slice(1)).toEqual([
      "user: My name is Ann.",
      "assistant: answer 2",
      "user: What is my name?",
      "assistant: answer 4",
      "user: And again?",
    ]);
    expect(asText(3).slice(1)).toEqual(["user: Who am I?"]);
  });

  it("runs under the configuration files as they are when it starts: an edit between two runs applies to the next", async () => {
    const workspace = await testWorkspace({ respond: () => reportStep("done") });
    const testStore = await testStoreOn("sqlite", workspace.directory);
    // The configuration is kept between runs (its files count as settled on this clock) and read again once edited.
    const context = executionContext(workspace, testStore.store, {
      configurationCache: createConfigurationCache({ now: () => Date.now() + 60_000 }),
    });
    const first = runRequest();
    await acceptRunRequest(first, context);
    expect((await executeRunRequest(first, context)).status).toBe("completed");
    const again = runRequest();
    await acceptRunRequest(again, context);
    expect((await executeRunRequest(again, context)).status).toBe("completed");
    expect(workspace.model.requests).toHaveLength(2);

    const moved = await startScriptedOpenAIServer({ respond: () => reportStep("done elsewhere") });
    try {
      const path = join(workspace.directory, ".charter.json");
      const configuration = JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
      await writeFile(
        path,
        JSON.stringify({ ...configuration, providers: localModelProvider(moved.baseUrl) }),
      );
      const afterEdit = runRequest();
      await acceptRunRequest(afterEdit, context);
      expect((await executeRunRequest(afterEdit, context)).status).toBe("completed");
      expect(moved.requests).toHaveLength(1);
      expect(workspace.model.requests).toHaveLength(2);
    } finally {
      await moved.close();
    }
  });

  it("runs under the tenant's provider and model overrides from the resolver", async () => {
    const workspace = await testWorkspace({ respond: () => reportStep("done") });
    const testStore = await testStoreOn("sqlite", workspace.directory);
    const context = executionContext(workspace, testStore.store, {
      tenantConfiguration: async (tenantId) =>
        tenantId === "acme"
          ? {
              label: "tenant acme",
              data: {
                providers: {
                  tenantlocal: {
                    type: "openai-compatible",
                    baseUrl: workspace.model.baseUrl,
                    models: { big: { contextWindow: 64000 } },
                  },
                },
                defaults: { models: ["tenantlocal/big"] },
              },
            }
          : null,
    });
    const request = runRequest({ agent: "standard" });
    await acceptRunRequest(request, context);
    await executeRunRequest(request, context);
    const events = await testStore.store.forTenant("acme").readRunEvents(request.runId);
    expect(events[1]?.data).toMatchObject({ agent: "standard", provider: "tenantlocal", model: "big" });
    expect((workspace.model.requests[0]!.body as { model: string }).model).toBe("big");
  });

  it("resumes a conversation's run under its own prompt and the role's tool classes it started with", async () => {
    const workspace = await testWorkspace({
      frontmatter: "\nabilities: [billing]",
      respond: (request) => {
        const messages = wireMessages(request);
        if (
          messages.some((message) => message.content === "Check the invoice totals.") &&
          messages.length <= 2
        )
          return reportStep("totals are fine");
        const answered = toolAnswers(request);
        if (answered === 0)
          return {
            kind: "tool_calls",
            calls: [{ id: "rm", name: "rest__remove", arguments: { key: "gamma" } }],
          };
        if (answered === 1)
          return {
            kind: "tool_calls",
            calls: [{ id: "wr", name: "rest__record", arguments: { key: "gamma" } }],
          };
        return reportStep("done");
      },
    });
    await mkdir(join(workspace.directory, "abilities"));
    await writeFile(
      join(workspace.directory, "abilities", "billing.md"),
      "---\nid: billing\nkeywords: [invoice]\n---\nInvoices are issued monthly.\n",
    );
    const testStore = await testStoreOn("sqlite", workspace.directory);
    // While the run waits, the role's classes change: the run keeps those it started with (read and delete only).
    let classes: readonly ("read_only" | "idempotent" | "write" | "delete")[] = ["read_only", "delete"];
    const context = executionContext(workspace, testStore.store, { roleToolClasses: () => classes });
    const first = runRequest({ conversationId: "billing-chat", prompt: "Check the invoice totals." });
    await acceptRunRequest(first, context);
    expect((await executeRunRequest(first, context)).status).toBe("completed");
    const second = runRequest({ conversationId: "billing-chat", prompt: "Remove gamma." });
    await acceptRunRequest(second, context);
    expect((await executeRunRequest(second, context)).status).toBe("awaiting_approval");
    classes = ["read_only", "idempotent", "write", "delete"];
    const decided = await continueRunRequest(
      second,
      {
        kind: "decision",
        decision: {
          runId: second.runId,
          requestId: "req_yes",
          tenantId: "acme",
          userId: "boss",
          role: "operator",
          correlationId: second.correlationId,
          approve: ["rm"],
          deny: [],
        },
      },
      context,
    );
    // The resume rebuilt the run's contract from its own prompt (the abilities it chose), not the conversation's first.
    expect(decided.result?.error ?? null).toBeNull();
    expect(decided.status).toBe("completed");
    expect(workspace.tools.requests.map((sent) => sent.method)).toEqual(["DELETE"]);
    const events = await testStore.store.forTenant("acme").readRunEvents(second.runId);
    expect(
      events.filter((event) => event.type === "TOOL_CALL").map((event) => event.data.error_code),
    ).toEqual([null, "TOOL_PERMISSION_DENIED"]);
  });
});
