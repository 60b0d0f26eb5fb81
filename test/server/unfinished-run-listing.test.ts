import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../src/testing/scripted-openai-server.js";
import { gitRepository } from "../work/git-fixture.js";
import { taskOf, toolResultsOf } from "../workflow/workflow-harness.js";
import { eventually, gate, releasedAfterTest } from "./execution-harness.js";
import { startRunningServer } from "./run-project.js";
import { startTestServer, testBackends } from "./server-harness.js";

/** Model runs in git repositories on a shared machine (and PostgreSQL): time enough before giving up. */
const heavy = 120_000;

function hasToolResult(request: RecordedRequest): boolean {
  return toolResultsOf(request) > 0;
}

/**
 * A server with two workers, three repositories and the `notes` workflow, whose scripted model holds every work
 * item whose task says "Hold" until the test opens `held`; a "Change a" item writes `src/a.txt` and reports.
 */
async function listingServer(backend: (typeof testBackends)[number]) {
  const held = gate();
  const respond = async (request: RecordedRequest) => {
    const task = taskOf(request);
    if (task.includes("Hold")) {
      await held.opened;
      return { kind: "text" as const, text: "held" };
    }
    if (task.includes("Change a") && !hasToolResult(request)) {
      return {
        kind: "tool_calls" as const,
        calls: [
          {
            id: "call_write",
            name: "workspace__write_file",
            arguments: { path: "src/a.txt", content: "b\n" },
          },
        ],
      };
    }
    return { kind: "text" as const, text: `done: ${task}` };
  };
  const workflows = await mkdtemp(join(tmpdir(), "charter-listing-workflows-"));
  await writeFile(
    join(workflows, "notes.workflow.yaml"),
    ["id: notes", "steps:", "  - { id: gather, agent: helper, prompt: 'List the changes' }"].join("\n"),
  );
  const repositories = {
    one: await gitRepository({ "src/a.txt": "a\n" }),
    two: await gitRepository({ "src/a.txt": "a\n" }),
    three: await gitRepository({ "src/a.txt": "a\n" }),
  };
  const api = await startRunningServer(
    backend,
    respond,
    { configuration: { workflows, repositories } },
    { workflowsDirectory: workflows, repositories },
  );
  releasedAfterTest(api, async () => {
    // Held runs are let go before the server drains its workers.
    held.open();
    await api.close();
    for (const directory of [workflows, ...Object.values(repositories)]) {
      await rm(directory, { recursive: true, force: true });
    }
  });
  return { api, held };
}

function item(id: string, description: string) {
  return { id, agent_id: "helper", description };
}

const ids = (runs: readonly { readonly workItemId: string }[]) => runs.map((run) => run.workItemId);
const statuses = (runs: readonly { readonly status: string }[]) => runs.map((run) => run.status);

describe.each(testBackends)("listing runs that have not ended on %s", (backend) => {
  it(
    "GET /v1/work-items/runs lists the items waiting for a worker and those running before the ended ones; GET /v1/workflows/runs lists a queued workflow run",
    async () => {
      const { api, held } = await listingServer(backend);
      const operator = await api.key("acme", "operator");
      const viewer = await api.key("acme", "viewer");
      const start = (body: Record<string, unknown>) =>
        api.request("POST", "/v1/work-items/runs", { key: operator, body });
      const list = async (query = "") => {
        const answer = await api.request("GET", `/v1/work-items/runs${query}`, { key: viewer });
        expect(answer.status).toBe(200);
        return answer.body as {
          workItemRuns: { workItemId: string; status: string; receipt: unknown }[];
          nextCursor: string | null;
        };
      };

      const ended = await start({ repository: "one", item: item("ended", "Change a to b."), wait: true });
      expect(ended.body.status).toBe("success");
      // Both workers take a held item; the third item and the workflow run wait for one of them.
      expect((await start({ repository: "two", item: item("held-1", "Hold one.") })).status).toBe(202);
      expect((await start({ repository: "three", item: item("held-2", "Hold two.") })).status).toBe(202);
      await eventually(
        "both workers' model calls",
        () => api.model.requests.filter((request) => taskOf(request).includes("Hold")).length === 2,
      );
      expect((await start({ repository: "one", item: item("waiting", "Hold three.") })).status).toBe(202);
      const workflow = await api.request("POST", "/v1/workflows/runs", {
        key: operator,
        body: { workflow: "notes" },
      });
      expect(workflow.status).toBe(202);

      const everything = await list();
      expect(ids(everything.workItemRuns)).toEqual(["waiting", "held-2", "held-1", "ended"]);
      expect(statuses(everything.workItemRuns)).toEqual(["queued", "running", "running", "success"]);
      expect(everything.workItemRuns.map((run) => run.receipt === null)).toEqual([true, true, true, false]);
      expect(everything.nextCursor).toBeNull();
      // Each listed item is what reading it alone answers.
      for (const listed of everything.workItemRuns) {
        const read = await api.request("GET", `/v1/work-items/runs/${(listed as { runId?: string }).runId}`, {
          key: viewer,
        });
        expect(read.body).toEqual(listed);
      }

      const queued = await list("?status=queued");
      expect(ids(queued.workItemRuns)).toEqual(["waiting"]);
      expect(queued.nextCursor).toBeNull();
      expect(ids((await list("?status=running")).workItemRuns)).toEqual(["held-2", "held-1"]);
      expect(ids((await list("?status=success")).workItemRuns)).toEqual(["ended"]);
      // The items not ended fill the first page; the cursor goes on with the ended ones, never back to them.
      const first = await list("?limit=3");
      expect(ids(first.workItemRuns)).toEqual(["waiting", "held-2", "held-1"]);
      expect(first.nextCursor).not.toBeNull();
      const second = await list(`?limit=3&cursor=${first.nextCursor}`);
      expect(ids(second.workItemRuns)).toEqual(["ended"]);
      expect(second.nextCursor).toBeNull();
      // Another tenant sees none of them.
      const stranger = await api.key("globex", "viewer");
      const foreign = await api.request("GET", "/v1/work-items/runs", { key: stranger });
      expect(foreign.body).toEqual({ workItemRuns: [], nextCursor: null });
      expect((await api.request("GET", "/v1/workflows/runs", { key: stranger })).body.workflowRuns).toEqual(
        [],
      );

      const workflows = await api.request("GET", "/v1/workflows/runs", { key: viewer });
      expect(workflows.body.workflowRuns).toEqual([
        (await api.request("GET", `/v1/workflows/runs/${workflow.body.runId}`, { key: viewer })).body,
      ]);
      expect(workflows.body.workflowRuns[0]).toMatchObject({
        runId: workflow.body.runId,
        workflowId: "notes",
        status: "queued",
      });
      const queuedWorkflows = await api.request("GET", "/v1/workflows/runs?status=queued", { key: viewer });
      expect(queuedWorkflows.body.workflowRuns.map((run: { runId: string }) => run.runId)).toEqual([
        workflow.body.runId,
      ]);

      held.open();
      const settled = await eventually("every item's receipt", async () => {
        const page = await list();
        return page.workItemRuns.every((run) => run.receipt !== null) ? page : null;
      });
      expect(ids(settled.workItemRuns).sort()).toEqual(["ended", "held-1", "held-2", "waiting"]);
      await eventually("the workflow run's end", async () => {
        const page = await api.request("GET", "/v1/workflows/runs", { key: viewer });
        return page.body.workflowRuns[0]?.status === "completed";
      });
    },
    heavy,
  );

  it("a server that executes nothing: accepted runs list as queued, and as running once a worker took them", async () => {
    const api = releasedAfterTest(await startTestServer(backend), (server) => server.close());
    const acme = api.store.forTenant("acme");
    const accept = (runId: string, request: Record<string, unknown>) =>
      acme.createRunRequest({
        event: {
          runId,
          requestId: `req_${runId}`,
          userId: null,
          correlationId: `corr_${runId}`,
          conversationId: null,
          data: {},
        },
        request: { v: 2, runId, correlationId: `corr_${runId}`, metadata: {}, ...request },
      });
    await accept("run_item", {
      kind: "work-item",
      agent: "helper",
      repository: "one",
      item: item("fix", "Fix it."),
    });
    await accept("run_flow", { kind: "workflow", agent: "notes", workflow: "notes", input: {} });
    const viewer = await api.key("acme", "viewer");
    const itemsNow = async () => (await api.request("GET", "/v1/work-items/runs", { key: viewer })).body;
    const workflowsNow = async () => (await api.request("GET", "/v1/workflows/runs", { key: viewer })).body;
    expect(await itemsNow()).toMatchObject({
      workItemRuns: [
        { runId: "run_item", workItemId: "fix", repository: "one", status: "queued", receipt: null },
      ],
      nextCursor: null,
    });
    expect(await workflowsNow()).toMatchObject({
      workflowRuns: [{ runId: "run_flow", workflowId: "notes", status: "queued" }],
      nextCursor: null,
    });
    // A worker took both (ROUTED) and has not stored their runs yet: running, as GET /v1/runs reads such a run.
    for (const runId of ["run_item", "run_flow"]) {
      await acme.appendRunEvent({
        runId,
        requestId: `req_${runId}`,
        userId: null,
        correlationId: `corr_${runId}`,
        conversationId: null,
        type: "ROUTED",
        data: {},
      });
    }
    expect((await itemsNow()).workItemRuns.map((run: { status: string }) => run.status)).toEqual(["running"]);
    expect((await workflowsNow()).workflowRuns.map((run: { status: string }) => run.status)).toEqual([
      "running",
    ]);
    const runs = await api.request("GET", "/v1/runs", { key: viewer });
    expect(runs.body.runs.map((run: { status: string }) => run.status)).toEqual(["running", "running"]);
  });
});
