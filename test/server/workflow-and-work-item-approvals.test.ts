import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../src/testing/scripted-openai-server.js";
import { git, gitRepository } from "../work/git-fixture.js";
import { eventually, postgresTestUrl } from "./execution-harness.js";
import { type RunningServer, startRunningServer } from "./run-project.js";
import type { TestBackend } from "./server-harness.js";

/** Real model runs, an MCP tool server, git and maybe PostgreSQL on a shared machine. */
const heavy = 120_000;

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

type Message = { role: string; content?: string };

function messagesOf(request: RecordedRequest): Message[] {
  return (request.body as { messages?: Message[] }).messages ?? [];
}

function taskOf(request: RecordedRequest): string {
  return messagesOf(request).find((message) => message.role === "user")?.content ?? "";
}

/** What the tool told the model, once it has answered (the denied call's refusal, or the record's result). */
function toolAnswer(request: RecordedRequest): string | null {
  return messagesOf(request).find((message) => message.role === "tool")?.content ?? null;
}

/**
 * The scripted model. A task starting "Record" (the recorder's step) calls the MCP test server's destructive
 * `record` tool once, then reports what the tool answered; any other task is answered at once.
 */
function respond(request: RecordedRequest) {
  const task = taskOf(request);
  if (task.startsWith("Work item keep-order")) return workItemAgent(request);
  if (!task.startsWith("Record")) return { kind: "text" as const, text: `done: ${task}` };
  const answer = toolAnswer(request);
  if (answer !== null) {
    return { kind: "text" as const, text: answer.includes("denied") ? "not recorded" : "recorded it" };
  }
  return {
    kind: "tool_calls" as const,
    calls: [{ id: "call_record", name: "test__record", arguments: { key: "order", value: "42" } }],
  };
}

/**
 * A work item's agent: writes `orders.txt` (a workspace write: no approval needed), then records the order with the
 * destructive `record` tool (which waits for a person), then reports what the tool answered.
 */
function workItemAgent(request: RecordedRequest) {
  const answers = messagesOf(request).filter((message) => message.role === "tool");
  if (answers.length === 0) {
    return {
      kind: "tool_calls" as const,
      calls: [
        {
          id: "call_write",
          name: "workspace__write_file",
          arguments: { path: "orders.txt", content: "42\n" },
        },
      ],
    };
  }
  if (answers.length === 1) {
    return {
      kind: "tool_calls" as const,
      calls: [{ id: "call_record", name: "test__record", arguments: { key: "order", value: "42" } }],
    };
  }
  return {
    kind: "text" as const,
    text: answers[1]?.content?.includes("denied") === true ? "not recorded" : "recorded it",
  };
}

/**
 * A server with the workflow `keep`: `gather` (the helper, no tools), then `keep` (the recorder, whose `record`
 * tool is destructive, so it waits for a person), then `tell` (the helper, after `keep`).
 */
async function workflowServer(
  backend: TestBackend,
  execution: Parameters<typeof startRunningServer>[3] = {},
) {
  const workflows = await mkdtemp(join(tmpdir(), "charter-server-approvals-"));
  await writeFile(
    join(workflows, "keep.workflow.yaml"),
    [
      "id: keep",
      "steps:",
      "  - { id: gather, agent: helper, prompt: 'List the orders' }",
      "  - { id: keep, agent: recorder, prompt: 'Record order 42', dependsOn: [gather] }",
      "  - { id: tell, agent: helper, prompt: 'Tell them: {{steps.keep.report}}', dependsOn: [keep] }",
      "output: '{{steps.tell.report}}'",
    ].join("\n"),
  );
  const api: RunningServer = await startRunningServer(
    backend,
    respond,
    { configuration: { workflows } },
    { workflowsDirectory: workflows, ...execution },
  );
  cleanups.push(async () => {
    await api.close();
    await rm(workflows, { recursive: true, force: true });
  });
  return api;
}

/** Starts the `keep` workflow and answers once it waits for a person (`wait: true` stops there). */
async function startWaitingWorkflow(api: RunningServer, operator: string) {
  const started = await api.request("POST", "/v1/workflows/runs", {
    key: operator,
    body: { workflow: "keep", input: {}, wait: true },
  });
  expect(started.status).toBe(200);
  return started.body as { runId: string; status: string; lifecycle: string; steps: { runId: string }[] };
}

async function recorded(api: RunningServer): Promise<unknown[]> {
  const text = (await readFile(api.recordFile, "utf8")).trim();
  return text === "" ? [] : text.split("\n").map((line) => JSON.parse(line));
}

/** How many model calls were made for tasks starting with `prefix`. */
function callsFor(api: RunningServer, prefix: string): number {
  return api.model.requests.filter((request) => taskOf(request).startsWith(prefix)).length;
}

async function approveWorkflowPath(
  backend: TestBackend,
  execution: Parameters<typeof startRunningServer>[3],
) {
  const api = await workflowServer(backend, execution);
  const operator = await api.key("acme", "operator", "ada");
  const waiting = await startWaitingWorkflow(api, operator);
  const runId = waiting.runId;
  // The workflow waits for a person on the recorder step's call, and says so with the call (arguments redacted).
  expect(waiting).toMatchObject({ status: "awaiting_approval", lifecycle: "AWAITING_APPROVAL" });
  const keepRunId = waiting.steps[1]?.runId;
  const pendingApprovals = [
    {
      stepId: "keep",
      runId: keepRunId,
      turn: 1,
      callId: "call_record",
      tool: "test__record",
      arguments: { key: "order", value: "42" },
    },
  ];
  expect((waiting as unknown as { pendingApprovals: unknown }).pendingApprovals).toEqual(pendingApprovals);
  const viewer = await api.key("acme", "viewer");
  const listed = await api.request("GET", "/v1/workflows/runs", { key: viewer });
  expect(listed.body.workflowRuns[0]).toMatchObject({ runId, status: "awaiting_approval", pendingApprovals });
  // The status filter says what the list says: waiting for a person, not stopped otherwise.
  const waitingOnes = await api.request("GET", "/v1/workflows/runs?status=awaiting_approval", {
    key: viewer,
  });
  expect(waitingOnes.body.workflowRuns.map((run: { runId: string }) => run.runId)).toEqual([runId]);
  const interruptedOnes = await api.request("GET", "/v1/workflows/runs?status=interrupted", { key: viewer });
  expect(interruptedOnes.body.workflowRuns).toEqual([]);
  const events = await api.store.forTenant("acme").readRunEvents(runId);
  expect(events.at(-1)).toMatchObject({
    type: "AWAITING_APPROVAL",
    data: { pending_approvals: pendingApprovals },
  });
  expect(await recorded(api)).toEqual([]);

  const approved = await api.request("POST", `/v1/workflows/runs/${runId}/approvals`, {
    key: operator,
    body: { callId: "call_record", decision: "approve" },
  });
  expect(approved.status).toBe(202);
  expect(approved.body).toEqual({ runId, callId: "call_record", decision: "approve", stepId: "keep" });
  const ended = await eventually("the approved workflow to complete", async () => {
    const read = await api.request("GET", `/v1/workflows/runs/${runId}`, { key: viewer });
    return read.body.lifecycle === "COMPLETED" || read.body.lifecycle === "FAILED" ? read : null;
  });
  expect(ended.body).toMatchObject({
    status: "completed",
    lifecycle: "COMPLETED",
    output: "done: Tell them: recorded it",
  });
  expect(ended.body.pendingApprovals).toBeUndefined();
  // The approved call ran exactly once; the completed step's model call was never made again.
  expect(await recorded(api)).toEqual([expect.objectContaining({ key: "order", value: "42" })]);
  expect(callsFor(api, "List the orders")).toBe(1);
  expect(ended.body.steps[1].runId).toBe(keepRunId);
  // The run's event stream tells a follower the same, in order.
  const stream = await fetch(`${api.address}/v1/runs/${runId}/events`, {
    headers: { authorization: `Bearer ${viewer}` },
  });
  const streamed = [...(await stream.text()).matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
  expect(streamed).toEqual([
    "REQUESTED",
    "ROUTED",
    "EXECUTING",
    "AWAITING_APPROVAL",
    "EXECUTING",
    "COMPLETED",
  ]);
  const types = (await api.store.forTenant("acme").readRunEvents(runId)).map((event) => event.type);
  expect(types).toEqual(["REQUESTED", "ROUTED", "EXECUTING", "AWAITING_APPROVAL", "EXECUTING", "COMPLETED"]);
  const decided = (await api.store.forTenant("acme").readRunEvents(runId))[4];
  expect(decided?.data).toMatchObject({ resumed: true, approve: ["call_record"], deny: [], step_id: "keep" });
  // Nothing waits any more: the same decision again is a conflict.
  const again = await api.request("POST", `/v1/workflows/runs/${runId}/approvals`, {
    key: operator,
    body: { callId: "call_record", decision: "approve" },
  });
  expect(again.status).toBe(409);
  expect(again.body.error).toMatchObject({
    code: "RUN_STATE_CONFLICT",
    details: { reason: "not_awaiting_approval" },
  });
}

describe("approvals of workflow runs through the API", () => {
  it(
    "a step's destructive call waits for a person; approved, it runs once and the workflow completes (SQLite)",
    async () => {
      await approveWorkflowPath("sqlite", {});
    },
    heavy,
  );

  it.skipIf(postgresTestUrl === "")(
    "the same over PostgreSQL, with the run and the decision queued through pg-boss",
    async () => {
      await approveWorkflowPath("postgres", { queue: "pg-boss" });
    },
    heavy,
  );

  it(
    "denied, the call never runs, the step's model is told, and the workflow completes without it",
    async () => {
      const api = await workflowServer("sqlite");
      const operator = await api.key("acme", "operator");
      const { runId } = await startWaitingWorkflow(api, operator);
      const denied = await api.request("POST", `/v1/workflows/runs/${runId}/approvals`, {
        key: operator,
        body: { callId: "call_record", decision: "deny" },
      });
      expect(denied.status).toBe(202);
      const ended = await eventually("the denied workflow to end", async () => {
        const read = await api.request("GET", `/v1/workflows/runs/${runId}`, { key: operator });
        return read.body.lifecycle === "COMPLETED" || read.body.lifecycle === "FAILED" ? read : null;
      });
      expect(ended.body).toMatchObject({ status: "completed", output: "done: Tell them: not recorded" });
      expect(await recorded(api)).toEqual([]);
      // What the model was told is the refusal, as a tool failure.
      const told = api.model.requests.map(toolAnswer).filter((answer) => answer !== null);
      expect(told).toEqual([expect.stringContaining("denied")]);
    },
    heavy,
  );

  it(
    "decisions are an operator's or an admin's, in the run's own tenant: viewer 403, another tenant 404 (recorded), an unknown call 409",
    async () => {
      const api = await workflowServer("sqlite");
      const operator = await api.key("acme", "operator");
      const { runId } = await startWaitingWorkflow(api, operator);
      const viewer = await api.request("POST", `/v1/workflows/runs/${runId}/approvals`, {
        key: await api.key("acme", "viewer"),
        body: { callId: "call_record", decision: "approve" },
      });
      expect(viewer.status).toBe(403);
      expect(viewer.body.error).toMatchObject({ code: "PERMISSION_DENIED", class: "permission_error" });
      const outsider = await api.request("POST", `/v1/workflows/runs/${runId}/approvals`, {
        key: await api.key("globex", "admin"),
        body: { callId: "call_record", decision: "approve" },
      });
      expect(outsider.status).toBe(404);
      expect(outsider.body.error).toMatchObject({ code: "RUN_NOT_FOUND" });
      expect(await api.store.forTenant("globex").listSecurityEvents()).toEqual([
        expect.objectContaining({ kind: "tenant_scope_violation" }),
      ]);
      const unknown = await api.request("POST", `/v1/workflows/runs/${runId}/approvals`, {
        key: operator,
        body: { callId: "call_other", decision: "approve" },
      });
      expect(unknown.status).toBe(409);
      expect(unknown.body.error).toMatchObject({
        code: "RUN_STATE_CONFLICT",
        details: { reason: "call_not_pending", pendingCallIds: ["call_record"] },
      });
      // None of them decided anything: the call has not run and the workflow still waits.
      expect(api.dispatcher.decided).toEqual([]);
      expect(await recorded(api)).toEqual([]);
      const read = await api.request("GET", `/v1/workflows/runs/${runId}`, { key: operator });
      expect(read.body.status).toBe("awaiting_approval");
      const documented = await api.request("GET", "/openapi.json");
      expect(Object.keys(documented.body.paths)).toEqual(
        expect.arrayContaining(["/v1/workflows/runs/{id}/approvals"]),
      );
    },
    heavy,
  );
});

/** A server with one repository, `service`, for work items. */
async function workItemServer(backend: TestBackend) {
  const repository = await gitRepository({ "README.md": "orders\n" });
  const repositories = { service: repository };
  const api: RunningServer = await startRunningServer(
    backend,
    respond,
    { configuration: { repositories } },
    { repositories },
  );
  cleanups.push(async () => {
    await api.close();
    await rm(repository, { recursive: true, force: true });
  });
  return { api, repository };
}

const keepOrder = {
  id: "keep-order",
  agent_id: "recorder",
  description: "Keep order 42 in orders.txt and record it.",
};

/** Starts the `keep-order` item and answers once it waits for a person (`wait: true` stops there). */
async function startWaitingItem(api: RunningServer, operator: string) {
  const started = await api.request("POST", "/v1/work-items/runs", {
    key: operator,
    body: { repository: "service", item: keepOrder, wait: true },
  });
  expect(started.status).toBe(200);
  return started.body as { runId: string; status: string; lifecycle: string };
}

async function itemEnded(api: RunningServer, key: string, runId: string) {
  return eventually("the work item run to end", async () => {
    const read = await api.request("GET", `/v1/work-items/runs/${runId}`, { key });
    return read.body.lifecycle === "COMPLETED" || read.body.lifecycle === "FAILED" ? read : null;
  });
}

describe("approvals of work item runs through the API", () => {
  it(
    "the item's agent's destructive call waits for a person with the working tree as the agent left it; approved, it runs once and the item commits",
    async () => {
      const { api, repository } = await workItemServer("sqlite");
      const operator = await api.key("acme", "operator");
      const waiting = await startWaitingItem(api, operator);
      const runId = waiting.runId;
      const pendingApprovals = [
        {
          stepId: null,
          runId,
          turn: 2,
          callId: "call_record",
          tool: "test__record",
          arguments: { key: "order", value: "42" },
        },
      ];
      expect(waiting).toMatchObject({
        status: "awaiting_approval",
        lifecycle: "AWAITING_APPROVAL",
        receipt: null,
      });
      expect((waiting as unknown as { pendingApprovals: unknown }).pendingApprovals).toEqual(
        pendingApprovals,
      );
      const events = await api.store.forTenant("acme").readRunEvents(runId);
      expect(events.at(-1)).toMatchObject({
        type: "AWAITING_APPROVAL",
        data: { pending_approvals: pendingApprovals },
      });
      const listed = await api.request("GET", "/v1/work-items/runs?status=awaiting_approval", {
        key: operator,
      });
      expect(listed.body.workItemRuns).toEqual([expect.objectContaining({ runId, pendingApprovals })]);
      // Nothing recorded, nothing committed; the agent's write is still in the working tree, waiting.
      expect(await recorded(api)).toEqual([]);
      expect(git(repository, "rev-list", "--count", "HEAD")).toBe("1");
      expect(await readFile(join(repository, "orders.txt"), "utf8")).toBe("42\n");

      const approved = await api.request("POST", `/v1/work-items/runs/${runId}/approvals`, {
        key: operator,
        body: { callId: "call_record", decision: "approve" },
      });
      expect(approved.status).toBe(202);
      expect(approved.body).toEqual({ runId, callId: "call_record", decision: "approve", stepId: null });
      const ended = await itemEnded(api, operator, runId);
      expect(ended.body).toMatchObject({ status: "success", lifecycle: "COMPLETED" });
      expect(ended.body.receipt.commit).toEqual(expect.any(String));
      // The approved call ran exactly once; the write before it was not made again (one model call saw no tool).
      expect(await recorded(api)).toEqual([expect.objectContaining({ key: "order", value: "42" })]);
      const firstTurns = api.model.requests.filter(
        (request) => messagesOf(request).filter((message) => message.role === "tool").length === 0,
      );
      expect(firstTurns).toHaveLength(1);
      expect(git(repository, "rev-list", "--count", "HEAD")).toBe("2");
      expect(git(repository, "show", "HEAD:orders.txt")).toBe("42");
      expect(git(repository, "status", "--porcelain")).toBe("");
      const types = (await api.store.forTenant("acme").readRunEvents(runId)).map((event) => event.type);
      expect(types).toEqual([
        "REQUESTED",
        "ROUTED",
        "EXECUTING",
        "AWAITING_APPROVAL",
        "EXECUTING",
        "COMPLETED",
      ]);
    },
    heavy,
  );

  it(
    "denied, the call never runs and the agent is told; only a person in the run's own tenant with an operator's role decides",
    async () => {
      const { api, repository } = await workItemServer("sqlite");
      const operator = await api.key("acme", "operator");
      const { runId } = await startWaitingItem(api, operator);
      const viewer = await api.request("POST", `/v1/work-items/runs/${runId}/approvals`, {
        key: await api.key("acme", "viewer"),
        body: { callId: "call_record", decision: "approve" },
      });
      expect(viewer.status).toBe(403);
      expect(viewer.body.error).toMatchObject({ code: "PERMISSION_DENIED", class: "permission_error" });
      const outsider = await api.request("POST", `/v1/work-items/runs/${runId}/approvals`, {
        key: await api.key("globex", "operator"),
        body: { callId: "call_record", decision: "approve" },
      });
      expect(outsider.status).toBe(404);
      expect(await api.store.forTenant("globex").listSecurityEvents()).toEqual([
        expect.objectContaining({ kind: "tenant_scope_violation" }),
      ]);
      const unknown = await api.request("POST", `/v1/work-items/runs/${runId}/approvals`, {
        key: operator,
        body: { callId: "call_write", decision: "approve" },
      });
      expect(unknown.status).toBe(409);
      expect(unknown.body.error).toMatchObject({
        code: "RUN_STATE_CONFLICT",
        details: { reason: "call_not_pending", pendingCallIds: ["call_record"] },
      });
      expect(api.dispatcher.decided).toEqual([]);

      const denied = await api.request("POST", `/v1/work-items/runs/${runId}/approvals`, {
        key: operator,
        body: { callId: "call_record", decision: "deny" },
      });
      expect(denied.status).toBe(202);
      const ended = await itemEnded(api, operator, runId);
      expect(ended.body).toMatchObject({ status: "success", lifecycle: "COMPLETED" });
      expect(await recorded(api)).toEqual([]);
      const told = api.model.requests.at(-1);
      expect(told === undefined ? null : messagesOf(told).at(-1)?.content).toContain("denied");
      // The agent's write stands, committed as the item's change.
      expect(git(repository, "show", "HEAD:orders.txt")).toBe("42");
    },
    heavy,
  );

  it(
    "cancelled while it waits, the item gives its repository back: working tree restored, failure receipt, the next item runs",
    async () => {
      const { api, repository } = await workItemServer("sqlite");
      const operator = await api.key("acme", "operator");
      const { runId } = await startWaitingItem(api, operator);
      expect(await readFile(join(repository, "orders.txt"), "utf8")).toBe("42\n");
      const cancelled = await api.request("POST", `/v1/work-items/runs/${runId}/cancel`, { key: operator });
      expect(cancelled.status).toBe(202);
      const ended = await itemEnded(api, operator, runId);
      expect(ended.body).toMatchObject({
        status: "failure",
        lifecycle: "FAILED",
        receipt: { status: "failure", error: "interrupted", commit: null },
      });
      expect(git(repository, "status", "--porcelain")).toBe("");
      expect(git(repository, "rev-list", "--count", "HEAD")).toBe("1");
      expect(await recorded(api)).toEqual([]);
      // The repository is free: the next item gets as far as its own approval (not WORK_LOCKED).
      const next = await startWaitingItem(api, operator);
      expect(next).toMatchObject({ status: "awaiting_approval" });
    },
    heavy,
  );
});
