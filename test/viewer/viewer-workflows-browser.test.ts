import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { startScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import { runWorkItem } from "../../src/work/run-work-item.js";
import { runWorkflow } from "../../src/workflow/run-workflow.js";
import { agentFile, localModelProvider } from "../cli/cli-harness.js";
import { startTestServer, type TestServer } from "../server/server-harness.js";
import { gitRepository } from "../work/git-fixture.js";
import { call, report } from "../work/work-harness.js";
import { answer, closeWorkflowServers, workflowWorkspace } from "../workflow/workflow-harness.js";
import { browserAvailable, launchChromium, signIn, watchedPage } from "./browser-harness.js";

describe.skipIf(!browserAvailable)("the run viewer's workflow and work item views in Chromium", () => {
  let browser: Browser;
  let api: TestServer;
  beforeAll(async () => {
    [browser, api] = await Promise.all([launchChromium(), startTestServer("sqlite")]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await closeWorkflowServers();
  });

  it("shows a workflow's steps as a graph linked to each step's run, and a work item's receipt, files and tests", async () => {
    const workspace = await workflowWorkspace({
      agents: { gatherer: "", writer: "" },
      workflow: [
        "id: notes",
        "steps:",
        "  - { id: gather, agent: gatherer.md, prompt: 'List the changes' }",
        "  - { id: draft, agent: writer.md, prompt: 'Write from {{steps.gather.report}}', dependsOn: [gather] }",
        "output: '{{steps.draft.report}}'",
      ].join("\n"),
      respond: (_request, agent) =>
        answer(agent === "gatherer" ? "two changes" : "# Notes\n\n- **two** changes"),
    });
    const workflow = await runWorkflow({
      workflowPath: workspace.workflowPath,
      cwd: workspace.directory,
      store: api.storeUrl,
      tenantId: "acme",
      runsDirectory: join(workspace.directory, "runs"),
      environment: deterministicEnvironment({ start: Date.UTC(2026, 0, 1) }),
    });
    expect(workflow.status).toBe("completed");

    const model = await startScriptedOpenAIServer({
      script: [call("workspace__write_file", { path: "src/a.txt", content: "b\n" }), report("changed a")],
    });
    const agentDirectory = await mkdtemp(join(tmpdir(), "charter-viewer-work-agent-"));
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
    const item = await runWorkItem({
      itemPath,
      repository: await gitRepository({ "src/a.txt": "a\n" }),
      store: api.storeUrl,
      tenantId: "acme",
      runsDirectory: join(agentDirectory, "runs"),
    });
    await model.close();
    expect(item.status).toBe("success");

    const { page, context, errors } = await watchedPage(browser);
    await signIn(page, api.address, await api.key("acme", "viewer"));
    await page.getByRole("link", { name: "Workflows" }).click();
    await page.locator(`tr[data-run-id="${workflow.workflowRunId}"]`).getByText("2 of 2 done").waitFor();
    await page.getByRole("link", { name: workflow.workflowRunId }).click();
    const graph = page.getByRole("img", { name: "The steps of notes and their order" });
    await graph.waitFor();
    // Each step is a node with its status; the second sits right of the first, an arrow between them.
    const gather = graph.locator('g[data-step-id="gather"]');
    const draft = graph.locator('g[data-step-id="draft"]');
    expect(await gather.textContent()).toContain("completed");
    expect(((await draft.boundingBox())?.x ?? 0) > ((await gather.boundingBox())?.x ?? 0)).toBe(true);
    expect(await graph.locator("line.edge").count()).toBe(1);
    await page.locator("h2 + .report").getByText("two").waitFor();
    // A step links to its run.
    await page.locator('tr[data-step-id="draft"]').getByRole("link").click();
    await page.getByRole("heading", { name: /^Run run_/ }).waitFor();
    await page.locator("#report").getByText("changes").waitFor();

    await page.getByRole("link", { name: "Work items" }).click();
    await page.locator(`tr[data-run-id="${item.run_id}"]`).getByText("success").waitFor();
    await page.getByRole("link", { name: item.run_id }).first().click();
    await page.getByRole("heading", { name: "Receipt" }).waitFor();
    await page.getByText(item.receipt_id).waitFor();
    await page.locator('section.file[data-path="src/a.txt"]').getByText("modified").waitFor();
    await page.getByText("test -f src/a.txt", { exact: true }).waitFor();

    // Another tenant sees neither.
    const other = await watchedPage(browser);
    await signIn(other.page, api.address, await api.key("globex", "viewer"));
    await other.page.goto(`${api.address}/#/workflows`);
    await other.page.getByText("No workflow runs.").waitFor();
    await other.page.goto(`${api.address}/#/work-items/${item.run_id}`);
    await other.page.getByText(`No work item run ${item.run_id} in your tenant.`).waitFor();
    expect(errors).toEqual([]);
    expect(other.errors).toEqual([]);
    await context.close();
    await other.context.close();
  }, 120_000);
});
