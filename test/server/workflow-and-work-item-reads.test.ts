import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { startScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import { runWorkItem } from "../../src/work/run-work-item.js";
import { runWorkflow } from "../../src/workflow/run-workflow.js";
import { agentFile, localModelProvider } from "../cli/cli-harness.js";
import { gitRepository } from "../work/git-fixture.js";
import { call, report } from "../work/work-harness.js";
import { answer, closeWorkflowServers, workflowWorkspace } from "../workflow/workflow-harness.js";
import { startTestServer, type TestServer, testBackends } from "./server-harness.js";

/** Real model runs, git and PostgreSQL on a shared machine: more time than the default before giving up. */
const heavy = 90_000;

let servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.reverse()) await server.close();
  servers = [];
  await closeWorkflowServers();
});

async function server(backend: (typeof testBackends)[number]): Promise<TestServer> {
  const started = await startTestServer(backend);
  servers.push(started);
  return started;
}

/** A workflow of two agent steps (the second depends on the first), run by the library for `tenantId` into the server's store. */
async function storedWorkflowRun(api: TestServer, tenantId: string): Promise<string> {
  const workspace = await workflowWorkspace({
    agents: { gatherer: "", writer: "" },
    workflow: [
      "id: notes",
      "input: { type: object, properties: { range: { type: string } } }",
      "steps:",
      "  - { id: gather, agent: gatherer.md, prompt: 'List {{input.range}}' }",
      "  - { id: draft, agent: writer.md, prompt: 'Write from {{steps.gather.report}}', dependsOn: [gather] }",
      "output: '{{steps.draft.report}}'",
    ].join("\n"),
    respond: (_request, agent) => answer(agent === "gatherer" ? "two changes" : "the notes"),
  });
  const result = await runWorkflow({
    workflowPath: workspace.workflowPath,
    cwd: workspace.directory,
    store: api.storeUrl,
    tenantId,
    input: { range: "v1..v2" },
    runsDirectory: join(workspace.directory, "runs"),
    environment: deterministicEnvironment({ start: Date.UTC(2026, 0, 1) }),
  });
  expect(result.status).toBe("completed");
  return result.workflowRunId;
}

describe.each(testBackends)("workflow and work item reads on %s", (backend) => {
  it(
    "a stored workflow run: listed, read with its steps, their dependencies and agent runs",
    async () => {
      const api = await server(backend);
      const workflowRunId = await storedWorkflowRun(api, "acme");
      const viewer = await api.key("acme", "viewer");

      const listed = await api.request("GET", "/v1/workflows/runs", { key: viewer });
      expect(listed.status).toBe(200);
      expect(listed.body.workflowRuns.map((run: { runId: string }) => run.runId)).toEqual([workflowRunId]);
      expect(listed.body.nextCursor).toBeNull();

      const read = await api.request("GET", `/v1/workflows/runs/${workflowRunId}`, { key: viewer });
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({
        runId: workflowRunId,
        workflowId: "notes",
        status: "completed",
        input: { range: "v1..v2" },
        output: "the notes",
        errors: [],
      });
      expect(read.body.steps).toEqual([
        expect.objectContaining({
          id: "gather",
          kind: "agent",
          agent: "gatherer.md",
          dependsOn: [],
          status: "completed",
          report: "two changes",
        }),
        expect.objectContaining({
          id: "draft",
          dependsOn: ["gather"],
          status: "completed",
          report: "the notes",
        }),
      ]);
      expect(listed.body.workflowRuns[0]).toEqual(read.body);
      // Each step's agent run is a run of its own, read through the run routes, with the workflow as its parent.
      const stepRunId = read.body.steps[1].runId as string;
      const stepRun = await api.request("GET", `/v1/runs/${stepRunId}`, { key: viewer });
      expect(stepRun.body).toMatchObject({
        runId: stepRunId,
        status: "completed",
        parentRunId: workflowRunId,
      });
      // An agent run is not a workflow run.
      const notWorkflow = await api.request("GET", `/v1/workflows/runs/${stepRunId}`, { key: viewer });
      expect(notWorkflow.status).toBe(404);
      expect(notWorkflow.body.error.code).toBe("RUN_NOT_FOUND");
      // A status filter and the run's pages.
      const failedOnly = await api.request("GET", "/v1/workflows/runs?status=failed", { key: viewer });
      expect(failedOnly.body.workflowRuns).toEqual([]);
    },
    heavy,
  );

  it(
    "another tenant's workflow run answers 404 and is recorded as a violation",
    async () => {
      const api = await server(backend);
      const workflowRunId = await storedWorkflowRun(api, "acme");
      const stranger = await api.key("globex", "admin");
      const read = await api.request("GET", `/v1/workflows/runs/${workflowRunId}`, { key: stranger });
      const unknown = await api.request("GET", "/v1/workflows/runs/run_nothing", { key: stranger });
      expect(read.status).toBe(404);
      // Exactly as a run that does not exist, but for the id.
      expect({ ...read.body.error, message: "", details: {} }).toEqual({
        ...unknown.body.error,
        message: "",
        details: {},
      });
      expect((await api.request("GET", "/v1/workflows/runs", { key: stranger })).body.workflowRuns).toEqual(
        [],
      );
      const violations = await api.store.forTenant("globex").listSecurityEvents();
      expect(violations).toHaveLength(1);
      expect(violations[0]).toMatchObject({ kind: "tenant_scope_violation" });
      expect(JSON.stringify(violations[0])).toContain(workflowRunId);
    },
    heavy,
  );

  it(
    "a work item run: listed with its receipt, read by its run id, another tenant's is 404",
    async () => {
      const api = await server(backend);
      const model = await startScriptedOpenAIServer({
        script: [call("workspace__write_file", { path: "src/a.txt", content: "b\n" }), report("changed a")],
      });
      const agentDirectory = await mkdtemp(join(tmpdir(), "charter-server-work-agent-"));
      await writeFile(join(agentDirectory, "agent.md"), agentFile("models: [local/m]\nmaxTurns: 5"));
      await writeFile(
        join(agentDirectory, ".charter.json"),
        JSON.stringify({ providers: localModelProvider(model.baseUrl) }),
      );
      const itemPath = join(agentDirectory, "item.json");
      await writeFile(
        itemPath,
        JSON.stringify({
          id: "change-a",
          agent_id: "agent.md",
          description: "Change a.",
          test_command: "test -f src/a.txt",
        }),
      );
      const repository = await gitRepository({ "src/a.txt": "a\n" });
      try {
        const result = await runWorkItem({
          itemPath,
          repository,
          store: api.storeUrl,
          tenantId: "acme",
          runsDirectory: join(agentDirectory, "runs"),
        });
        expect(result.status).toBe("success");
        const viewer = await api.key("acme", "viewer");
        const listed = await api.request("GET", "/v1/work-items/runs", { key: viewer });
        expect(listed.status).toBe(200);
        expect(listed.body.workItemRuns).toHaveLength(1);
        const read = await api.request("GET", `/v1/work-items/runs/${result.run_id}`, { key: viewer });
        expect(read.status).toBe(200);
        expect(listed.body.workItemRuns[0]).toEqual(read.body);
        expect(read.body).toMatchObject({
          runId: result.run_id,
          workItemId: "change-a",
          status: "success",
          item: expect.objectContaining({ id: "change-a", description: "Change a." }),
          receipt: {
            receiptId: result.receipt_id,
            status: "success",
            files: [{ path: "src/a.txt", change: "modified", hash: expect.any(String), diff: null }],
            test: { command: "test -f src/a.txt", passed: null, failed: null },
            contractHash: expect.stringMatching(/^[0-9a-f]{64}$/),
            transcriptHead: expect.stringMatching(/^[0-9a-f]{64}$/),
            commit: null,
          },
        });
        // The item's run is its agent's run.
        const run = await api.request("GET", `/v1/runs/${result.run_id}`, { key: viewer });
        expect(run.body.chain.head).toBe(read.body.receipt.transcriptHead);
        expect(
          (await api.request("GET", "/v1/work-items/runs?status=denied", { key: viewer })).body.workItemRuns,
        ).toEqual([]);

        const stranger = await api.key("globex", "viewer");
        const refused = await api.request("GET", `/v1/work-items/runs/${result.run_id}`, { key: stranger });
        expect(refused.status).toBe(404);
        expect(refused.body.error.code).toBe("RUN_NOT_FOUND");
        expect(
          (await api.request("GET", "/v1/work-items/runs", { key: stranger })).body.workItemRuns,
        ).toEqual([]);
        expect(await api.store.forTenant("globex").listSecurityEvents()).toHaveLength(1);
      } finally {
        await model.close();
      }
    },
    heavy,
  );

  it("the read routes are in the OpenAPI document and need credentials", async () => {
    const api = await server(backend);
    const document = await api.request("GET", "/openapi.json");
    for (const path of [
      "/v1/workflows/runs",
      "/v1/workflows/runs/{id}",
      "/v1/work-items/runs",
      "/v1/work-items/runs/{id}",
    ]) {
      expect(document.body.paths[path]?.get?.responses?.["200"]).toBeDefined();
    }
    expect((await api.request("GET", "/v1/workflows/runs")).status).toBe(401);
    const viewer = await api.key("acme", "viewer");
    const badCursor = await api.request("GET", "/v1/work-items/runs?cursor=zzz", { key: viewer });
    expect(badCursor.status).toBe(400);
  });
});
