import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../src/testing/scripted-openai-server.js";
import { eventually, gate } from "./execution-harness.js";
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

const answerDone = () => ({ kind: "text" as const, text: "done" });

/** Whether the model request carries a tool result already (the second turn of a tool-calling run). */
function hasToolResult(request: RecordedRequest): boolean {
  const messages = (request.body as { messages?: { role: string }[] }).messages ?? [];
  return messages.some((message) => message.role === "tool");
}

/** Record a thing first (a destructive call, so the run stops for approval), then report. */
function recordThenReport(request: RecordedRequest) {
  return hasToolResult(request)
    ? { kind: "text" as const, text: "recorded it" }
    : {
        kind: "tool_calls" as const,
        calls: [{ id: "call_record", name: "test__record", arguments: { key: "order", value: "42" } }],
      };
}

describe.each(testBackends)("the runs API on %s", (backend) => {
  it("POST /v1/runs: 202 with the run id, then the run, its place in the list and its transcript", async () => {
    const api = await running(backend, answerDone);
    const operator = await api.key("acme", "operator", "ada");
    const started = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "helper", prompt: "Say done.", metadata: { ticket: "T-1" } },
      headers: { "x-correlation-id": "order-42" },
    });
    expect(started.status).toBe(202);
    const runId = started.body.runId as string;
    expect(started.body).toEqual({ runId });
    expect(started.headers.get("location")).toBe(`/v1/runs/${runId}`);
    expect(started.headers.get("x-correlation-id")).toBe("order-42");
    // What the execution side was handed: the caller's identity and the request, as plain JSON.
    expect(api.dispatcher.dispatched).toEqual([
      {
        runId,
        requestId: expect.stringMatching(/^req_/),
        tenantId: "acme",
        userId: "ada",
        role: "operator",
        correlationId: "order-42",
        conversationId: null,
        agent: "helper",
        prompt: "Say done.",
        input: null,
        metadata: { ticket: "T-1" },
        requestedAt: api.environment.now(),
      },
    ]);
    await api.dispatcher.whenSettled("acme", runId, new AbortController().signal);

    const viewer = await api.key("acme", "viewer");
    const run = await api.request("GET", `/v1/runs/${runId}`, { key: viewer });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      runId,
      kind: "agent",
      agent: "helper",
      status: "completed",
      outcome: "COMPLETED_CHAT_ONLY",
      correlationId: "order-42",
      turns: 1,
      finalReport: expect.objectContaining({ content: "done" }),
    });
    expect(run.body.pendingApprovals).toBeUndefined();

    const listed = await api.request("GET", "/v1/runs?status=completed&agent=helper", { key: viewer });
    expect(listed.status).toBe(200);
    expect(listed.body.runs.map((each: { runId: string }) => each.runId)).toEqual([runId]);
    expect(listed.body.nextCursor).toBeNull();
    expect((await api.request("GET", "/v1/runs?status=failed", { key: viewer })).body.runs).toEqual([]);

    const transcript = await api.request("GET", `/v1/runs/${runId}/transcript`, { key: viewer });
    expect(transcript.status).toBe(200);
    const states = transcript.body.entries.map((entry: { state: string }) => entry.state);
    expect(states[0]).toBe("PRECHECK");
    expect(states.at(-1)).toBe("TERMINATE");
    expect(transcript.body.entries.length).toBe(run.body.chain.entries);
    expect(transcript.body.entries.at(-1).hash).toBe(run.body.chain.head);
    expect(transcript.body.nextFromSeq).toBeNull();
    const page = await api.request("GET", `/v1/runs/${runId}/transcript?fromSeq=1&limit=2`, { key: viewer });
    expect(page.body.entries.map((entry: { seq: number }) => entry.seq)).toEqual([1, 2]);
    expect(page.body.nextFromSeq).toBe(3);
  });

  it("wait: true answers with the finished run; a generated correlation id is sent back", async () => {
    const api = await running(backend, answerDone);
    const operator = await api.key("acme", "operator");
    const finished = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "helper", input: { question: "done?" }, wait: true },
    });
    expect(finished.status).toBe(200);
    expect(finished.body).toMatchObject({ status: "completed", outcome: "COMPLETED_CHAT_ONLY" });
    const correlationId = finished.headers.get("x-correlation-id");
    expect(correlationId).toMatch(/^corr_/);
    expect(finished.body.correlationId).toBe(correlationId);
    // The input reached the model as its canonical JSON text.
    expect(JSON.stringify(api.model.requests[0]?.body)).toContain(JSON.stringify('{"question":"done?"}'));
  });

  it("lists a page at a time with an opaque cursor, newest first", async () => {
    const api = await running(backend, answerDone);
    const operator = await api.key("acme", "operator");
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) {
      api.environment.advance(1000);
      const started = await api.request("POST", "/v1/runs", {
        key: operator,
        body: { agent: "helper", prompt: `run ${index}`, wait: true },
      });
      ids.push(started.body.runId);
    }
    const first = await api.request("GET", "/v1/runs?limit=2", { key: operator });
    expect(first.body.runs.map((run: { runId: string }) => run.runId)).toEqual([ids[2], ids[1]]);
    const second = await api.request("GET", `/v1/runs?limit=2&cursor=${first.body.nextCursor}`, {
      key: operator,
    });
    expect(second.body.runs.map((run: { runId: string }) => run.runId)).toEqual([ids[0]]);
    expect(second.body.nextCursor).toBeNull();
    const forged = await api.request("GET", "/v1/runs?cursor=not-a-cursor", { key: operator });
    expect(forged.status).toBe(400);
    expect(forged.body.error.code).toBe("REQUEST_INVALID");
  });

  it("lists the runs waiting for a worker first, as queued, and filters them", async () => {
    // Both workers are busy with a model that answers only once the test opens it: the third run waits in the queue.
    const answered = gate();
    const api = await running(backend, async () => {
      await answered.opened;
      return answerDone();
    });
    const operator = await api.key("acme", "operator");
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) {
      api.environment.advance(1000);
      const started = await api.request("POST", "/v1/runs", {
        key: operator,
        body: { agent: "helper", prompt: `run ${index}` },
      });
      ids.push(started.body.runId);
      if (index < 2) {
        const runId = started.body.runId;
        await eventually(`run ${index} at the model`, () => api.model.requests.length > index);
        // At the model, its worker has it: running, never queued (EXECUTING: stored, so listed with the stored runs).
        await eventually(`run ${index} running`, async () => {
          const run = await api.request("GET", `/v1/runs/${runId}`, { key: operator });
          return run.body.status === "running" && run.body.lifecycle === "EXECUTING";
        });
      }
    }
    const listed = await api.request("GET", "/v1/runs", { key: operator });
    expect(listed.body.runs.map((run: { runId: string; status: string }) => [run.runId, run.status])).toEqual(
      [
        [ids[2], "queued"],
        [ids[1], "running"],
        [ids[0], "running"],
      ],
    );
    const queued = await api.request("GET", "/v1/runs?status=queued", { key: operator });
    expect(queued.body).toEqual({
      runs: [expect.objectContaining({ runId: ids[2], agent: "helper" })],
      nextCursor: null,
    });
    expect(
      (await api.request("GET", "/v1/runs?status=queued&agent=other", { key: operator })).body.runs,
    ).toEqual([]);
    // A page of two: the queued run and the newest started one; the next page goes on with the started runs.
    const first = await api.request("GET", "/v1/runs?limit=2", { key: operator });
    expect(first.body.runs.map((run: { runId: string }) => run.runId)).toEqual([ids[2], ids[1]]);
    const second = await api.request("GET", `/v1/runs?limit=2&cursor=${first.body.nextCursor}`, {
      key: operator,
    });
    expect(second.body.runs.map((run: { runId: string }) => run.runId)).toEqual([ids[0]]);
    // Another tenant sees none of them.
    const other = await api.request("GET", "/v1/runs", { key: await api.key("globex", "viewer") });
    expect(other.body.runs).toEqual([]);
    answered.open();
    await eventually("every run completed", async () => {
      const all = await api.request("GET", "/v1/runs", { key: operator });
      return (
        all.body.runs.every((run: { status: string }) => run.status === "completed") &&
        all.body.runs.length === 3
      );
    });
  });

  it("refuses what the API does not accept, 400 naming the field, before anything is dispatched", async () => {
    const api = await running(backend, answerDone);
    const operator = await api.key("acme", "operator");
    const cases: [unknown, string][] = [
      [{ prompt: "x" }, "body/agent"],
      [{ agent: "helper" }, "body"],
      [{ agent: "helper", prompt: "x", input: {} }, "body"],
      [{ agent: "../../etc/passwd", prompt: "x" }, "body/agent"],
      [{ agent: "helper", prompt: "x", promt: "y" }, "body/promt"],
      [{ agent: "helper", prompt: "x", wait: "yes" }, "body/wait"],
    ];
    for (const [body, path] of cases) {
      const refused = await api.request("POST", "/v1/runs", { key: operator, body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "REQUEST_INVALID", class: "validation_error" });
      expect(refused.body.error.details.issues[0].path, JSON.stringify(body)).toBe(path);
    }
    const notJson = await fetch(`${api.address}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${operator}`, "content-type": "application/json" },
      body: "{not json",
    });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { code: string } }).error.code).toBe("REQUEST_INVALID");
    const longCorrelation = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "helper", prompt: "x" },
      headers: { "x-correlation-id": "c".repeat(300) },
    });
    expect(longCorrelation.status).toBe(400);
    expect(longCorrelation.body.error.details.argument).toBe("correlationId");
    expect(api.dispatcher.dispatched).toEqual([]);
  });

  it("roles: a viewer reads but may not start, cancel or approve runs", async () => {
    const api = await running(backend, answerDone);
    const viewer = await api.key("acme", "viewer");
    const operator = await api.key("acme", "operator");
    const runId = (
      await api.request("POST", "/v1/runs", {
        key: operator,
        body: { agent: "helper", prompt: "x", wait: true },
      })
    ).body.runId;
    for (const [method, path, body] of [
      ["POST", "/v1/runs", { agent: "helper", prompt: "x" }],
      ["POST", `/v1/runs/${runId}/cancel`, undefined],
      ["POST", `/v1/runs/${runId}/approvals`, { callId: "call_x", decision: "approve" }],
      ["PUT", "/v1/tenant/config", {}],
    ] as const) {
      const refused = await api.request(method, path, {
        key: viewer,
        ...(body !== undefined ? { body } : {}),
      });
      expect(refused.status, path).toBe(403);
      expect(refused.body.error.class).toBe("permission_error");
    }
    expect((await api.request("PUT", "/v1/tenant/config", { key: operator, body: {} })).status).toBe(403);
    expect((await api.request("GET", `/v1/runs/${runId}`, { key: viewer })).status).toBe(200);
  });

  it("every run endpoint answers another tenant's run as a missing one, records the attempt, then blocks the address", async () => {
    const api = await running(backend, recordThenReport);
    const acme = await api.key("acme", "operator");
    const runId = (
      await api.request("POST", "/v1/runs", {
        key: acme,
        body: { agent: "recorder", prompt: "Record order 42.", wait: true },
      })
    ).body.runId;
    expect((await api.request("GET", `/v1/runs/${runId}`, { key: acme })).body.status).toBe(
      "awaiting_approval",
    );
    const globex = await api.key("globex", "admin", "mallory");
    const attempts = [
      ["GET", `/v1/runs/${runId}`, undefined],
      ["GET", `/v1/runs/${runId}/transcript`, undefined],
      ["POST", `/v1/runs/${runId}/cancel`, undefined],
      ["POST", `/v1/runs/${runId}/approvals`, { callId: "call_record", decision: "approve" }],
    ] as const;
    for (const [method, path, body] of attempts) {
      const missing = await api.request(method, path.replace(runId, "run_missing"), {
        key: globex,
        ...(body !== undefined ? { body } : {}),
      });
      const foreign = await api.request(method, path, {
        key: globex,
        ...(body !== undefined ? { body } : {}),
      });
      expect(foreign.status, path).toBe(404);
      expect(foreign.body.error).toEqual({
        code: "RUN_NOT_FOUND",
        class: "validation_error",
        message: `no run ${runId}`,
        details: { runId },
      });
      expect(missing.body.error.message).toBe("no run run_missing");
    }
    // Nothing was done to acme's run: still waiting, nothing recorded, nothing decided.
    expect(api.dispatcher.decided).toEqual([]);
    expect(await readFile(api.recordFile, "utf8")).toBe("");
    // The list shows globex none of acme's runs.
    expect((await api.request("GET", "/v1/runs", { key: globex })).body.runs).toEqual([]);
    const events = await api.store.forTenant("globex").listSecurityEvents();
    expect(events.map((event) => [event.details.method, event.details.route])).toEqual([
      ["GET", "/v1/runs/:id"],
      ["GET", "/v1/runs/:id/transcript"],
      ["POST", "/v1/runs/:id/cancel"],
      ["POST", "/v1/runs/:id/approvals"],
    ]);
    expect(events.every((event) => event.details.resourceId === runId && event.userId === "mallory")).toBe(
      true,
    );
    // The fifth blocks the address.
    expect((await api.request("GET", `/v1/runs/${runId}`, { key: globex })).status).toBe(404);
    expect((await api.request("GET", "/v1/runs", { key: globex })).status).toBe(403);
  });

  it("approvals: the run waits for a person; a wrong call id is 409; approve continues it and the call runs once", async () => {
    const api = await running(backend, recordThenReport);
    const operator = await api.key("acme", "operator", "ada");
    const stopped = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "recorder", prompt: "Record order 42.", wait: true },
    });
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ status: "awaiting_approval" });
    expect(stopped.body.pendingApprovals).toEqual([
      { turn: 1, callId: "call_record", tool: "test__record", arguments: { key: "order", value: "42" } },
    ]);
    const runId = stopped.body.runId as string;
    const wrong = await api.request("POST", `/v1/runs/${runId}/approvals`, {
      key: operator,
      body: { callId: "call_other", decision: "approve" },
    });
    expect(wrong.status).toBe(409);
    expect(wrong.body.error).toMatchObject({
      code: "RUN_STATE_CONFLICT",
      details: { pendingCallIds: ["call_record"] },
    });
    const badDecision = await api.request("POST", `/v1/runs/${runId}/approvals`, {
      key: operator,
      body: { callId: "call_record", decision: "maybe" },
    });
    expect(badDecision.status).toBe(400);
    expect(await readFile(api.recordFile, "utf8")).toBe("");

    const approved = await api.request("POST", `/v1/runs/${runId}/approvals`, {
      key: operator,
      body: { callId: "call_record", decision: "approve" },
      headers: { "x-correlation-id": "approval-1" },
    });
    expect(approved.status).toBe(202);
    expect(approved.body).toEqual({ runId, callId: "call_record", decision: "approve" });
    expect(api.dispatcher.decided).toEqual([
      expect.objectContaining({
        runId,
        tenantId: "acme",
        userId: "ada",
        role: "operator",
        correlationId: "approval-1",
        approve: ["call_record"],
        deny: [],
      }),
    ]);
    const finished = await eventually("the approved run to finish", async () => {
      const run = await api.request("GET", `/v1/runs/${runId}`, { key: operator });
      return run.body.lifecycle === "COMPLETED" ? run : null;
    });
    expect(finished.body).toMatchObject({
      status: "completed",
      outcome: "COMPLETED_WITH_TOOLS",
      userId: "ada",
    });
    const records = (await readFile(api.recordFile, "utf8")).trim().split("\n");
    expect(records.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ key: "order", value: "42" }),
    ]);
    // Nothing waits any more.
    const again = await api.request("POST", `/v1/runs/${runId}/approvals`, {
      key: operator,
      body: { callId: "call_record", decision: "approve" },
    });
    expect(again.status).toBe(409);
  });

  it("deny: the call never runs, the model is told", async () => {
    const api = await running(backend, recordThenReport);
    const operator = await api.key("acme", "operator");
    const runId = (
      await api.request("POST", "/v1/runs", {
        key: operator,
        body: { agent: "recorder", prompt: "Record order 42.", wait: true },
      })
    ).body.runId;
    const denied = await api.request("POST", `/v1/runs/${runId}/approvals`, {
      key: operator,
      body: { callId: "call_record", decision: "deny" },
    });
    expect(denied.status).toBe(202);
    await eventually("the denied run to finish", async () => {
      const run = await api.request("GET", `/v1/runs/${runId}`, { key: operator });
      return run.body.lifecycle === "COMPLETED" ? run : null;
    });
    expect((await api.request("GET", `/v1/runs/${runId}`, { key: operator })).body.status).toBe("completed");
    expect(await readFile(api.recordFile, "utf8")).toBe("");
  });

  it("cancel: a running run stops at its next checkpoint, a queued one before it starts; a stopped run cannot be cancelled (409)", async () => {
    let reachModel: () => void = () => undefined;
    const modelReached = new Promise<void>((resolveReached) => {
      reachModel = resolveReached;
    });
    // Every model call is held: the runs stay where they are until cancelled.
    const api = await running(backend, async () => {
      reachModel();
      await new Promise(() => {});
      return { kind: "text", text: "never" };
    });
    const operator = await api.key("acme", "operator");
    const start = async () =>
      (await api.request("POST", "/v1/runs", { key: operator, body: { agent: "helper", prompt: "Wait." } }))
        .body.runId as string;
    const first = await start();
    await modelReached;
    const second = await start();
    // Two workers: the third waits in the queue, accepted and stored, and shows so.
    await eventually("the second run to be executing", async () => {
      const run = await api.request("GET", `/v1/runs/${second}`, { key: operator });
      return run.body.status === "running" ? run : null;
    });
    const third = await start();
    const queued = await api.request("GET", `/v1/runs/${third}`, { key: operator });
    expect(queued.status).toBe(200);
    expect(queued.body).toMatchObject({
      runId: third,
      status: "queued",
      lifecycle: "REQUESTED",
      agent: "helper",
      turns: 0,
    });
    for (const runId of [third, first, second]) {
      const cancelled = await api.request("POST", `/v1/runs/${runId}/cancel`, { key: operator });
      expect(cancelled.status, runId).toBe(202);
      expect(cancelled.body).toEqual({ runId, cancelling: true });
    }
    for (const runId of [first, second, third])
      await api.dispatcher.whenSettled("acme", runId, new AbortController().signal);
    const stopped = await api.request("GET", `/v1/runs/${first}`, { key: operator });
    expect(stopped.body).toMatchObject({ lifecycle: "FAILED", outcome: "INTERRUPTED" });
    // Cancelled before any worker started it: interrupted, with when it ended, though it never ran.
    expect((await api.request("GET", `/v1/runs/${third}`, { key: operator })).body).toMatchObject({
      status: "interrupted",
      lifecycle: "FAILED",
      outcome: "INTERRUPTED",
      errorCode: "INTERRUPTED",
      turns: 0,
      finishedAt: expect.any(String),
    });
    const again = await api.request("POST", `/v1/runs/${first}/cancel`, { key: operator });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("RUN_STATE_CONFLICT");
  });
});
