import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createInProcessRunDispatcher } from "../../src/server/execution/in-process-run-dispatcher.js";
import { runRequestVersion } from "../../src/server/execution/run-request.js";
import { createPgBossRunDispatcher } from "../../src/server/workers/pg-boss-run-dispatcher.js";
import type { RecordedRequest } from "../../src/testing/scripted-openai-server.js";
import { type RunningServer, startRunningServer } from "./run-project.js";
import { testBackends } from "./server-harness.js";

const heavy = 120_000;

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

function taskOf(request: RecordedRequest): string {
  const messages = (request.body as { messages?: { role: string; content?: string }[] }).messages ?? [];
  return messages.find((message) => message.role === "user")?.content ?? "";
}

/**
 * A model whose first answer to the second step ("Write ...") waits until `release` is called, so the test can act
 * while that step's run is under way; `reached` resolves once it is. Every other call is answered at once.
 */
function gatedModel() {
  let reachedResolve: () => void = () => undefined;
  let releaseResolve: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => {
    reachedResolve = resolve;
  });
  const released = new Promise<void>((resolve) => {
    releaseResolve = resolve;
  });
  const tasks: string[] = [];
  let gated = false;
  return {
    reached,
    release: () => releaseResolve(),
    tasks,
    async respond(request: RecordedRequest) {
      const task = taskOf(request);
      tasks.push(task);
      if (task.startsWith("Write") && !gated) {
        gated = true;
        reachedResolve();
        await released;
      }
      return { kind: "text" as const, text: `done: ${task}` };
    },
  };
}

async function gatedServer(backend: (typeof testBackends)[number]) {
  const model = gatedModel();
  const workflows = await mkdtemp(join(tmpdir(), "charter-server-workflows-"));
  await writeFile(
    join(workflows, "notes.workflow.yaml"),
    [
      "id: notes",
      "steps:",
      "  - { id: gather, agent: helper, prompt: 'List {{input.range}}' }",
      "  - { id: draft, agent: helper, prompt: 'Write from {{steps.gather.report}}', dependsOn: [gather] }",
      "output: '{{steps.draft.report}}'",
    ].join("\n"),
  );
  const api: RunningServer = await startRunningServer(
    backend,
    (request) => model.respond(request),
    { configuration: { workflows } },
    { workflowsDirectory: workflows },
  );
  cleanups.push(async () => {
    model.release();
    await api.close();
    await rm(workflows, { recursive: true, force: true });
  });
  return { api, model };
}

describe.each(testBackends)("workflow runs that stop on %s", (backend) => {
  it(
    "a workflow run drained mid-way is continued by the next worker from its checkpoint: the completed step never runs again",
    async () => {
      const { api, model } = await gatedServer(backend);
      const operator = await api.key("acme", "operator");
      const started = await api.request("POST", "/v1/workflows/runs", {
        key: operator,
        body: { workflow: "notes", input: { range: "v1..v2" } },
      });
      const runId = started.body.runId as string;
      await model.reached;
      // This worker stops (SIGTERM): the running step stops at its checkpoint, the workflow is left interrupted.
      await api.dispatcher.drain();
      const viewer = await api.key("acme", "viewer");
      const stopped = await api.request("GET", `/v1/workflows/runs/${runId}`, { key: viewer });
      expect(stopped.body).toMatchObject({ status: "interrupted", lifecycle: "EXECUTING" });
      expect(stopped.body.steps.map((step: { status: string }) => step.status)).toEqual([
        "completed",
        "interrupted",
      ]);

      // The next worker on the store continues it.
      const next = createInProcessRunDispatcher({ context: api.context, workers: 1 });
      cleanups.push(() => next.drain());
      await next.start();
      await next.whenSettled("acme", runId, new AbortController().signal);
      const ended = await api.request("GET", `/v1/workflows/runs/${runId}`, { key: viewer });
      expect(ended.body).toMatchObject({
        status: "completed",
        lifecycle: "COMPLETED",
        output: "done: Write from done: List v1..v2",
      });
      // The completed step keeps its run; the interrupted one, which had committed no turn, started again.
      expect(ended.body.steps[0].runId).toBe(stopped.body.steps[0].runId);
      // The first step's model call happened once; the second's was asked again after the stop.
      expect(model.tasks.filter((task) => task.startsWith("List"))).toHaveLength(1);
      const events = await api.store.forTenant("acme").readRunEvents(runId);
      expect(events.map((event) => event.type)).toEqual([
        "REQUESTED",
        "ROUTED",
        "EXECUTING",
        "EXECUTING",
        "COMPLETED",
      ]);
      expect(events[3]?.data).toMatchObject({ resumed: true, taken_over: true });
    },
    heavy,
  );

  it(
    "POST /v1/workflows/runs/:id/cancel stops the workflow and its running step; its lifecycle ends FAILED, cancelled",
    async () => {
      const { api, model } = await gatedServer(backend);
      const operator = await api.key("acme", "operator");
      const started = await api.request("POST", "/v1/workflows/runs", {
        key: operator,
        body: { workflow: "notes", input: { range: "v1..v2" } },
      });
      const runId = started.body.runId as string;
      await model.reached;
      const viewer = await api.key("acme", "viewer");
      expect((await api.request("POST", `/v1/workflows/runs/${runId}/cancel`, { key: viewer })).status).toBe(
        403,
      );
      const cancelled = await api.request("POST", `/v1/workflows/runs/${runId}/cancel`, { key: operator });
      expect(cancelled.status).toBe(202);
      expect(cancelled.body).toEqual({ runId, cancelling: true });
      await api.dispatcher.whenSettled("acme", runId, new AbortController().signal);
      const read = await api.request("GET", `/v1/workflows/runs/${runId}`, { key: viewer });
      expect(read.body).toMatchObject({ status: "interrupted", lifecycle: "FAILED" });
      const events = await api.store.forTenant("acme").readRunEvents(runId);
      expect(events.at(-1)).toMatchObject({ type: "FAILED", data: { cancelled: true } });
      const again = await api.request("POST", `/v1/workflows/runs/${runId}/cancel`, { key: operator });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe("RUN_STATE_CONFLICT");
    },
    heavy,
  );
});

describe.skipIf(!testBackends.includes("postgres"))("workflow runs through the pg-boss queue", () => {
  it(
    "a workflow run queued in pg-boss is executed by a queue worker, like an agent run",
    async () => {
      const { api, model } = await gatedServer("postgres");
      model.release();
      const boss = await createPgBossRunDispatcher({
        context: api.context,
        url: api.storeUrl,
        workers: 1,
        pollMilliseconds: 100,
        leaseMilliseconds: 3000,
      });
      cleanups.push(() => boss.close());
      const runId = "run_queued_workflow";
      await boss.dispatch({
        v: runRequestVersion,
        kind: "workflow",
        runId,
        requestId: "req_queued",
        tenantId: "acme",
        userId: null,
        role: "operator",
        correlationId: "corr_queued",
        conversationId: null,
        agent: "notes",
        workflow: "notes",
        prompt: null,
        input: { range: "q1" },
        metadata: {},
        requestedAt: Date.now(),
      });
      await boss.whenSettled("acme", runId, new AbortController().signal);
      const viewer = await api.key("acme", "viewer");
      const read = await api.request("GET", `/v1/workflows/runs/${runId}`, { key: viewer });
      expect(read.body).toMatchObject({
        status: "completed",
        lifecycle: "COMPLETED",
        correlationId: "corr_queued",
        output: "done: Write from done: List q1",
      });
    },
    heavy,
  );
});
