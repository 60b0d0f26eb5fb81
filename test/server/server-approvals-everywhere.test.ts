import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../src/testing/scripted-openai-server.js";
import { eventually } from "./execution-harness.js";
import { type RunningServer, startRunningServer } from "./run-project.js";

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

function hasToolResult(request: RecordedRequest): boolean {
  const messages = (request.body as { messages?: { role: string }[] }).messages ?? [];
  return messages.some((message) => message.role === "tool");
}

/** Records a thing (a destructive call of the test tool server), then reports. */
function recordThenReport(request: RecordedRequest) {
  return hasToolResult(request)
    ? { kind: "text" as const, text: "recorded it" }
    : {
        kind: "tool_calls" as const,
        calls: [{ id: "call_record", name: "test__record", arguments: { key: "order", value: "42" } }],
      };
}

describe("a destructive call on every server path", () => {
  it("waits for a person in a workflow's agent step too, even when the agent's approvedTools names the tool", async () => {
    const workflows = await mkdtemp(join(tmpdir(), "charter-server-approvals-"));
    await writeFile(
      join(workflows, "record.workflow.yaml"),
      ["id: record", "steps:", "  - { id: keep, agent: recorder, prompt: 'Record the order' }"].join("\n"),
    );
    const api: RunningServer = await startRunningServer(
      "sqlite",
      recordThenReport,
      { configuration: { workflows } },
      { workflowsDirectory: workflows },
    );
    cleanups.push(async () => {
      await api.close();
      await rm(workflows, { recursive: true, force: true });
    });
    // The agent pre-approves the destructive tool: fine for `charter run` at a terminal, never on a server.
    await writeFile(
      join(api.directory, "agents", "recorder.md"),
      "---\ndescription: Records things\nmodels: [local/m]\ntools: [test]\ntoolPolicy: optional\nmaxTurns: 4\ndestructiveTools: [test__record]\napprovedTools: [test__record]\n---\nYou record what you are told.\n",
    );
    const started = await api.request("POST", "/v1/workflows/runs", {
      key: await api.key("acme", "operator"),
      body: { workflow: "record", input: {} },
    });
    expect(started.status).toBe(202);
    // The step's run stops for a person's decision on the call; the tool has not run.
    const waiting = await eventually("the step's run waiting for an approval", async () => {
      const runs = await api.store.forTenant("acme").listRuns({ limit: 10, agentId: "recorder" });
      return runs.find((run) => run.status === "awaiting_approval");
    });
    expect(waiting.parentRunId).toBe(started.body.runId);
    expect(await readFile(api.recordFile, "utf8")).toBe("");
  }, 120_000);
});
