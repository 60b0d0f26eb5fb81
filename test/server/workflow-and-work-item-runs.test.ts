import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type RecordedRequest, startScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import { git, gitRepository } from "../work/git-fixture.js";
import { type RunningServer, startRunningServer } from "./run-project.js";
import { testBackends } from "./server-harness.js";

/** Real model runs, git and PostgreSQL on a shared machine: more time than the default before giving up. */
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

function hasToolResult(request: RecordedRequest): boolean {
  const messages = (request.body as { messages?: { role: string }[] }).messages ?? [];
  return messages.some((message) => message.role === "tool");
}

/**
 * The scripted model: a work item's agent (its task names the repository) writes `src/a.txt` once, then reports; a
 * workflow step answers with what it was asked.
 */
function respond(request: RecordedRequest) {
  const task = taskOf(request);
  if (task.includes("Change a")) {
    return hasToolResult(request)
      ? { kind: "text" as const, text: "changed a" }
      : {
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
}

/** A server with a workflows folder (`notes`: two steps, the second depending on the first) and one repository. */
async function flowServer(backend: (typeof testBackends)[number]) {
  const workflows = await mkdtemp(join(tmpdir(), "charter-server-workflows-"));
  await writeFile(
    join(workflows, "notes.workflow.yaml"),
    [
      "id: notes",
      "input: { type: object, required: [range], properties: { range: { type: string } } }",
      "steps:",
      "  - { id: gather, agent: helper, prompt: 'List {{input.range}}' }",
      "  - { id: draft, agent: helper, prompt: 'Write from {{steps.gather.report}}', dependsOn: [gather] }",
      "output: '{{steps.draft.report}}'",
    ].join("\n"),
  );
  const repository = await gitRepository({ "src/a.txt": "a\n" });
  const repositories = { service: repository };
  const api: RunningServer = await startRunningServer(
    backend,
    respond,
    { configuration: { workflows, repositories } },
    { workflowsDirectory: workflows, repositories },
  );
  cleanups.push(async () => {
    await api.close();
    await rm(workflows, { recursive: true, force: true });
    await rm(repository, { recursive: true, force: true });
  });
  return { api, repository };
}

describe.each(testBackends)("workflow and work item runs through the API on %s", (backend) => {
  it(
    "POST /v1/workflows/runs: accepted as a workflow request, its steps' agent runs readable, its lifecycle stored",
    async () => {
      const { api } = await flowServer(backend);
      const operator = await api.key("acme", "operator", "ada");
      const started = await api.request("POST", "/v1/workflows/runs", {
        key: operator,
        body: { workflow: "notes", input: { range: "v1..v2" }, metadata: { ticket: "T-9" } },
        headers: { "idempotency-key": "notes-1" },
      });
      expect(started.status).toBe(202);
      const runId = started.body.runId as string;
      expect(started.headers.get("location")).toBe(`/v1/workflows/runs/${runId}`);
      expect(api.dispatcher.dispatched[0]).toMatchObject({
        v: 2,
        kind: "workflow",
        runId,
        workflow: "notes",
        input: { range: "v1..v2" },
        tenantId: "acme",
        role: "operator",
      });
      // A retry with the same key and body is the same run; no second run is dispatched.
      const retried = await api.request("POST", "/v1/workflows/runs", {
        key: operator,
        body: { workflow: "notes", input: { range: "v1..v2" }, metadata: { ticket: "T-9" }, wait: true },
        headers: { "idempotency-key": "notes-1" },
      });
      expect(retried.status).toBe(200);
      expect(api.dispatcher.dispatched).toHaveLength(1);

      const viewer = await api.key("acme", "viewer");
      const read = await api.request("GET", `/v1/workflows/runs/${runId}`, { key: viewer });
      expect(read.status).toBe(200);
      expect(retried.body).toEqual(read.body);
      expect(read.body).toMatchObject({
        runId,
        workflowId: "notes",
        status: "completed",
        lifecycle: "COMPLETED",
        userId: "ada",
        metadata: { ticket: "T-9" },
        input: { range: "v1..v2" },
        output: "done: Write from done: List v1..v2",
      });
      expect(
        read.body.steps.map((step: { id: string; dependsOn: string[] }) => [step.id, step.dependsOn]),
      ).toEqual([
        ["gather", []],
        ["draft", ["gather"]],
      ]);
      for (const step of read.body.steps) {
        const stepRun = await api.request("GET", `/v1/runs/${step.runId}`, { key: viewer });
        expect(stepRun.body).toMatchObject({ status: "completed", parentRunId: runId, agent: "helper" });
      }
      const listed = await api.request("GET", "/v1/workflows/runs", { key: viewer });
      expect(listed.body.workflowRuns.map((run: { runId: string }) => run.runId)).toEqual([runId]);
      const events = await api.store.forTenant("acme").readRunEvents(runId);
      expect(events.map((event) => event.type)).toEqual(["REQUESTED", "ROUTED", "EXECUTING", "COMPLETED"]);
      expect(events[0]?.data).toMatchObject({ kind: "workflow", agent: "notes", role: "operator" });
      expect(events[3]?.data).toMatchObject({ workflow_status: "completed", error: null });

      // Another tenant sees none of it.
      const stranger = await api.key("globex", "admin");
      expect((await api.request("GET", `/v1/workflows/runs/${runId}`, { key: stranger })).status).toBe(404);
      expect((await api.request("GET", `/v1/runs/${runId}`, { key: stranger })).status).toBe(404);
    },
    heavy,
  );

  it("refuses what it cannot start: a viewer, an unknown workflow, an input that does not match, an agent the tenant may not run", async () => {
    const { api } = await flowServer(backend);
    const viewer = await api.key("acme", "viewer");
    const operator = await api.key("acme", "operator");
    const asViewer = await api.request("POST", "/v1/workflows/runs", {
      key: viewer,
      body: { workflow: "notes", input: { range: "x" } },
    });
    expect(asViewer.status).toBe(403);
    expect(asViewer.body.error.code).toBe("PERMISSION_DENIED");
    const unknown = await api.request("POST", "/v1/workflows/runs", {
      key: operator,
      body: { workflow: "nothing" },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({
      code: "WORKFLOW_NOT_FOUND",
      details: { workflow: "nothing" },
    });
    const path = await api.request("POST", "/v1/workflows/runs", {
      key: operator,
      body: { workflow: "../notes" },
    });
    expect(path.status).toBe(400);
    const badInput = await api.request("POST", "/v1/workflows/runs", {
      key: operator,
      body: { workflow: "notes", input: { range: 7 } },
    });
    expect(badInput.status).toBe(422);
    expect(badInput.body.error.code).toBe("WORKFLOW_INPUT_INVALID");
    const admin = await api.key("acme", "admin");
    await api.request("PUT", "/v1/tenant/config", { key: admin, body: { allowedAgents: ["recorder"] } });
    const notAllowed = await api.request("POST", "/v1/workflows/runs", {
      key: operator,
      body: { workflow: "notes", input: { range: "x" } },
    });
    expect(notAllowed.status).toBe(403);
    expect(notAllowed.body.error.details).toMatchObject({
      reason: "agent_not_allowed",
      agent: "helper",
      step: "gather",
    });
    expect(api.dispatcher.dispatched).toEqual([]);
  });

  it(
    "POST /v1/work-items/runs: the item changes the named repository, and its receipt (diff, test output, commit) is readable",
    async () => {
      const { api, repository } = await flowServer(backend);
      const operator = await api.key("acme", "operator", "ada");
      const item = {
        id: "change-a",
        agent_id: "helper",
        description: "Change a to b.",
        test_command: "grep -q b src/a.txt && echo '1 passed'",
      };
      const ended = await api.request("POST", "/v1/work-items/runs", {
        key: operator,
        body: { repository: "service", item, wait: true },
      });
      expect(ended.status).toBe(200);
      const runId = ended.body.runId as string;
      expect(api.dispatcher.dispatched[0]).toMatchObject({
        kind: "work-item",
        repository: "service",
        item,
        runId,
      });
      expect(ended.body).toMatchObject({
        runId,
        workItemId: "change-a",
        repository: "service",
        status: "success",
        lifecycle: "COMPLETED",
        userId: "ada",
        item: expect.objectContaining(item),
        receipt: {
          status: "success",
          files: [
            {
              path: "src/a.txt",
              change: "modified",
              diff: expect.stringMatching(/-a\n\+b/),
            },
          ],
          test: {
            command: item.test_command,
            output: expect.stringContaining("1 passed"),
            passed: 1,
            failed: 0,
          },
          contractHash: expect.stringMatching(/^[0-9a-f]{64}$/),
          commit: expect.stringMatching(/^[0-9a-f]{40}$/),
        },
      });
      // The change is one commit on the repository's branch.
      expect(git(repository, "log", "-1", "--format=%H")).toBe(ended.body.receipt.commit);
      expect(await readFile(join(repository, "src/a.txt"), "utf8")).toBe("b\n");
      const viewer = await api.key("acme", "viewer");
      const read = await api.request("GET", `/v1/work-items/runs/${runId}`, { key: viewer });
      expect(read.body).toEqual(ended.body);
      const listed = await api.request("GET", "/v1/work-items/runs", { key: viewer });
      expect(listed.body.workItemRuns).toEqual([ended.body]);
      // The item's run is its agent's run, with its transcript.
      const run = await api.request("GET", `/v1/runs/${runId}`, { key: viewer });
      expect(run.body.chain.head).toBe(ended.body.receipt.transcriptHead);
      const stranger = await api.key("globex", "viewer");
      expect((await api.request("GET", `/v1/work-items/runs/${runId}`, { key: stranger })).status).toBe(404);
    },
    heavy,
  );

  it(
    "the tenant's provider settings apply to every step of its workflows and to its work items' agents",
    async () => {
      const { api } = await flowServer(backend);
      const tenantModel = await startScriptedOpenAIServer({ respond });
      cleanups.push(() => tenantModel.close());
      const admin = await api.key("acme", "admin");
      const configured = await api.request("PUT", "/v1/tenant/config", {
        key: admin,
        body: { providers: { local: { apiKey: "sk-tenant-acme", baseUrl: tenantModel.baseUrl } } },
      });
      expect(configured.status).toBe(200);
      const workflow = await api.request("POST", "/v1/workflows/runs", {
        key: admin,
        body: { workflow: "notes", input: { range: "v3" }, wait: true },
      });
      expect(workflow.body.status).toBe("completed");
      const item = await api.request("POST", "/v1/work-items/runs", {
        key: admin,
        body: {
          repository: "service",
          item: { id: "change-a", agent_id: "helper", description: "Change a." },
          wait: true,
        },
      });
      expect(item.body.status).toBe("success");
      // Every model call went to the tenant's endpoint, with the tenant's key; none to the server's own.
      expect(tenantModel.requests.map((request) => taskOf(request))).toEqual([
        "List v3",
        "Write from done: List v3",
        expect.stringContaining("Change a."),
        expect.stringContaining("Change a."),
      ]);
      expect(api.model.requests).toEqual([]);
    },
    heavy,
  );

  it("refuses work items it cannot run: unknown repository, invalid item (the field named), a path as agent, a viewer", async () => {
    const { api } = await flowServer(backend);
    const operator = await api.key("acme", "operator");
    const item = { id: "x", agent_id: "helper", description: "Do it." };
    const unknown = await api.request("POST", "/v1/work-items/runs", {
      key: operator,
      body: { repository: "/etc", item },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({
      code: "WORK_REPOSITORY_NOT_FOUND",
      details: { repository: "/etc", repositories: ["service"] },
    });
    const invalid = await api.request("POST", "/v1/work-items/runs", {
      key: operator,
      body: { repository: "service", item: { ...item, constraints: { max_files: 0 } } },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error).toMatchObject({
      code: "WORK_ITEM_INVALID",
      details: { field: "constraints.max_files", location: "body/item/constraints.max_files" },
    });
    const asPath = await api.request("POST", "/v1/work-items/runs", {
      key: operator,
      body: { repository: "service", item: { ...item, agent_id: "../agents/helper.md" } },
    });
    expect(asPath.status).toBe(422);
    expect(asPath.body.error.details).toMatchObject({ field: "agent_id", reason: "not_an_id" });
    const viewer = await api.key("acme", "viewer");
    const asViewer = await api.request("POST", "/v1/work-items/runs", {
      key: viewer,
      body: { repository: "service", item },
    });
    expect(asViewer.status).toBe(403);
    expect(api.dispatcher.dispatched).toEqual([]);
  });
});
