import { EventSource } from "eventsource";
import { afterEach, describe, expect, it } from "vitest";
import { createServer } from "../../src/server/create-server.js";
import type { RecordedRequest } from "../../src/testing/scripted-openai-server.js";
import { type RunningServer, startRunningServer } from "./run-project.js";
import { testBackends } from "./server-harness.js";

let cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function running(
  backend: (typeof testBackends)[number],
  respond: Parameters<typeof startRunningServer>[1],
): Promise<RunningServer> {
  const server = await startRunningServer(backend, respond);
  cleanups.push(() => server.close());
  return server;
}

/** A gate the scripted model waits at: the run stays in its first model call until the test opens it. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

interface ReceivedEvent {
  readonly id: string;
  readonly type: string;
  // biome-ignore lint/suspicious/noExplicitAny: an event's JSON, read field by field in the assertions
  readonly data: any;
}

const lifecycleTypes = [
  "REQUESTED",
  "ROUTED",
  "EXECUTING",
  "TOOL_CALL",
  "AWAITING_APPROVAL",
  "COMPLETED",
  "FAILED",
];

/**
 * A real EventSource on the run's stream, with the key sent as a bearer token: every event it receives, and
 * `until(type)`, which resolves once an event of that type has arrived.
 */
function subscribe(address: string, runId: string, key: string) {
  const received: ReceivedEvent[] = [];
  const waiters: { type: string; resolve: () => void }[] = [];
  const source = new EventSource(`${address}/v1/runs/${runId}/events`, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${key}` } }),
  });
  cleanups.push(() => source.close());
  for (const type of lifecycleTypes) {
    source.addEventListener(type, (event) => {
      received.push({ id: event.lastEventId, type: event.type, data: JSON.parse(event.data) });
      for (const waiter of waiters.filter((candidate) => candidate.type === type)) waiter.resolve();
    });
  }
  return {
    source,
    received,
    until(type: string): Promise<void> {
      if (received.some((event) => event.type === type)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ type, resolve }));
    },
  };
}

/** The whole body of a stream that ends by itself, parsed as server-sent events. */
async function readStream(response: Response): Promise<ReceivedEvent[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "" && !block.startsWith(":"))
    .map((block) => {
      const field = (name: string) =>
        block
          .split("\n")
          .filter((line) => line.startsWith(`${name}: `))
          .map((line) => line.slice(name.length + 2))
          .join("\n");
      return { id: field("id"), type: field("event"), data: JSON.parse(field("data")) };
    });
}

function hasToolResult(request: RecordedRequest): boolean {
  const messages = (request.body as { messages?: { role: string }[] }).messages ?? [];
  return messages.some((message) => message.role === "tool");
}

describe.each(testBackends)("GET /v1/runs/:id/events on %s", (backend) => {
  it("streams the run's lifecycle live, from the start, and ends after the final event", async () => {
    const model = gate();
    const api = await running(backend, async () => {
      await model.opened;
      return { kind: "text", text: "done" };
    });
    const operator = await api.key("acme", "operator", "ada");
    const viewer = await api.key("acme", "viewer");
    const started = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "helper", prompt: "Say done." },
      headers: { "x-correlation-id": "order-42" },
    });
    const runId = started.body.runId as string;
    const stream = subscribe(api.address, runId, viewer);
    // The run is held in its model call: what arrived so far arrived while it was running.
    await stream.until("EXECUTING");
    expect(stream.received.map((event) => event.type)).toEqual(["REQUESTED", "ROUTED", "EXECUTING"]);
    model.open();
    await stream.until("COMPLETED");
    expect(stream.received.map((event) => [event.id, event.type])).toEqual([
      ["1", "REQUESTED"],
      ["2", "ROUTED"],
      ["3", "EXECUTING"],
      ["4", "COMPLETED"],
    ]);
    const completed = stream.received[3]?.data;
    expect(completed).toMatchObject({
      type: "COMPLETED",
      sequence: 4,
      task_id: runId,
      tenant_id: "acme",
      user_id: "ada",
      correlation_id: "order-42",
      outcome: "COMPLETED_CHAT_ONLY",
      final_state: "success",
    });
    expect(completed.token_usage.total_tokens).toBeGreaterThan(0);
    // The events are the stored ones, in the same order and with the same numbers.
    const stored = await api.store.forTenant("acme").readRunEvents(runId);
    expect(stream.received.map((event) => event.data.sequence)).toEqual(
      stored.map((event) => event.sequence),
    );
  });

  it("stays open while the run waits for a person, and goes on after the decision", async () => {
    const api = await running(backend, (request) =>
      hasToolResult(request)
        ? { kind: "text", text: "recorded it" }
        : {
            kind: "tool_calls",
            calls: [{ id: "call_record", name: "test__record", arguments: { key: "order", value: "42" } }],
          },
    );
    const operator = await api.key("acme", "operator");
    const runId = (
      await api.request("POST", "/v1/runs", {
        key: operator,
        body: { agent: "recorder", prompt: "Record 42." },
      })
    ).body.runId as string;
    const stream = subscribe(api.address, runId, operator);
    await stream.until("AWAITING_APPROVAL");
    const approved = await api.request("POST", `/v1/runs/${runId}/approvals`, {
      key: operator,
      body: { callId: "call_record", decision: "approve" },
    });
    expect(approved.status).toBe(202);
    await stream.until("COMPLETED");
    expect(stream.received.map((event) => event.type)).toEqual([
      "REQUESTED",
      "ROUTED",
      "EXECUTING",
      "AWAITING_APPROVAL",
      "ROUTED",
      "EXECUTING",
      "TOOL_CALL",
      "COMPLETED",
    ]);
    expect(stream.received.find((event) => event.type === "TOOL_CALL")?.data).toMatchObject({
      tool: "test__record",
      call_id: "call_record",
      status: "ok",
    });
  });

  it("resumes after Last-Event-ID with the later events only; after the last one it answers 204", async () => {
    const api = await running(backend, () => ({ kind: "text", text: "done" }));
    const operator = await api.key("acme", "operator");
    const runId = (
      await api.request("POST", "/v1/runs", {
        key: operator,
        body: { agent: "helper", prompt: "Hi.", wait: true },
      })
    ).body.runId as string;
    const headers = { authorization: `Bearer ${operator}` };
    const all = await fetch(`${api.address}/v1/runs/${runId}/events`, { headers });
    expect(all.status).toBe(200);
    expect(all.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect((await readStream(all)).map((event) => event.id)).toEqual(["1", "2", "3", "4"]);
    const resumed = await fetch(`${api.address}/v1/runs/${runId}/events`, {
      headers: { ...headers, "last-event-id": "2" },
    });
    expect((await readStream(resumed)).map((event) => [event.id, event.type])).toEqual([
      ["3", "EXECUTING"],
      ["4", "COMPLETED"],
    ]);
    const after = await fetch(`${api.address}/v1/runs/${runId}/events`, {
      headers: { ...headers, "last-event-id": "4" },
    });
    expect(after.status).toBe(204);
    const invalid = await fetch(`${api.address}/v1/runs/${runId}/events`, {
      headers: { ...headers, "last-event-id": "three" },
    });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { code: string } }).error.code).toBe("REQUEST_INVALID");
  });

  it("a live EventSource that reconnects with Last-Event-ID receives only the events after it", async () => {
    const model = gate();
    const api = await running(backend, async () => {
      await model.opened;
      return { kind: "text", text: "done" };
    });
    const operator = await api.key("acme", "operator");
    const runId = (
      await api.request("POST", "/v1/runs", { key: operator, body: { agent: "helper", prompt: "Hi." } })
    ).body.runId as string;
    const first = subscribe(api.address, runId, operator);
    await first.until("EXECUTING");
    first.source.close();
    // A client that had event 2 comes back while the run is still running.
    const resumed = await fetch(`${api.address}/v1/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${operator}`, "last-event-id": "2" },
    });
    model.open();
    expect((await readStream(resumed)).map((event) => [event.id, event.type])).toEqual([
      ["3", "EXECUTING"],
      ["4", "COMPLETED"],
    ]);
  });

  it("a server that does not execute the run (another process) finds its events in the store", async () => {
    const model = gate();
    const api = await running(backend, async () => {
      await model.opened;
      return { kind: "text", text: "done" };
    });
    // A second API process on the same store, executing nothing: it hears no events, it reads them.
    const reader = await createServer({ store: api.store, environment: api.environment });
    const readerAddress = await reader.listen({ host: "127.0.0.1", port: 0 });
    cleanups.push(() => reader.close());
    const operator = await api.key("acme", "operator");
    const runId = (
      await api.request("POST", "/v1/runs", { key: operator, body: { agent: "helper", prompt: "Hi." } })
    ).body.runId as string;
    const stream = subscribe(readerAddress, runId, operator);
    await stream.until("EXECUTING");
    model.open();
    await stream.until("COMPLETED");
    expect(stream.received.map((event) => event.type)).toEqual([
      "REQUESTED",
      "ROUTED",
      "EXECUTING",
      "COMPLETED",
    ]);
  });

  it("another tenant's run is the same 404 as a missing one, recorded; credentials are needed", async () => {
    const api = await running(backend, () => ({ kind: "text", text: "done" }));
    const acme = await api.key("acme", "operator");
    const runId = (
      await api.request("POST", "/v1/runs", {
        key: acme,
        body: { agent: "helper", prompt: "Hi.", wait: true },
      })
    ).body.runId as string;
    const globex = await api.key("globex", "viewer", "mallory");
    const foreign = await api.request("GET", `/v1/runs/${runId}/events`, { key: globex });
    const missing = await api.request("GET", "/v1/runs/run_missing/events", { key: globex });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toEqual({
      code: "RUN_NOT_FOUND",
      class: "validation_error",
      message: `no run ${runId}`,
      details: { runId },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("RUN_NOT_FOUND");
    const violations = await api.store.forTenant("globex").listSecurityEvents();
    expect(violations.map((event) => [event.details.route, event.details.resourceId, event.userId])).toEqual([
      ["/v1/runs/:id/events", runId, "mallory"],
    ]);
    expect((await api.request("GET", `/v1/runs/${runId}/events`, { key: null })).status).toBe(401);
  });
});
