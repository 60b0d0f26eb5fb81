import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemEnvironment } from "../../src/foundation/environment.js";
import { runAgent } from "../../src/runner/run-agent.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { charterProcess, localModelProvider } from "../cli/cli-harness.js";

/** `runAgent({ tenantId, correlationId })`: who a run is for, on its run row and its sub-agents' rows. */
let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const report = (content: string): ScriptedStep => ({
  kind: "tool_calls",
  calls: [{ name: "final_report", arguments: { format: "markdown", content } }],
});

/** The parent delegates once to the child, whose system prompt names it; the child answers at once. */
function respond(request: RecordedRequest): ScriptedStep {
  const messages = (request.body as { messages: { role: string; content?: string }[] }).messages;
  if (messages[0]?.content?.includes("I am child")) return report("child done");
  return messages.some((message) => message.role === "tool")
    ? report("parent done")
    : { kind: "tool_calls", calls: [{ name: "agent__child", arguments: { prompt: "Help." } }] };
}

describe("runAgent tenant and correlation ids", () => {
  it("are stored on the run row and its sub-agents' rows, and `charter runs show --json` prints them", async () => {
    server = await startScriptedOpenAIServer({ respond });
    const directory = await mkdtemp(join(tmpdir(), "charter-tenant-"));
    await writeFile(
      join(directory, "parent.md"),
      "---\nmodels: [local/m]\nagents: [./child.md]\n---\nI am parent.\n",
    );
    await writeFile(join(directory, "child.md"), "---\nmodels: [local/m]\n---\nI am child.\n");
    await writeFile(
      join(directory, ".charter.json"),
      JSON.stringify({ providers: localModelProvider(server.baseUrl) }),
    );
    const store = join(directory, "runs.db");
    const result = await runAgent({
      agentPath: join(directory, "parent.md"),
      prompt: "Delegate.",
      cwd: directory,
      runsDirectory: join(directory, "runs"),
      store,
      tenantId: "acme",
      correlationId: "request-42",
    });
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");

    const shown = await charterProcess(
      ["runs", "show", result.runId, "--json", "--store", store, "--tenant", "acme"],
      {
        cwd: directory,
      },
    );
    expect(JSON.parse(shown.stdout)).toMatchObject({
      runId: result.runId,
      tenantId: "acme",
      correlationId: "request-42",
      parentRunId: null,
    });
    const opened = await openRunStore({ path: store, environment: systemEnvironment, tenantId: "acme" });
    try {
      const runs = await opened.listRuns();
      expect(runs.map((run) => [run.agentId, run.parentRunId, run.correlationId]).sort()).toEqual([
        ["child", result.runId, "request-42"],
        ["parent", null, "request-42"],
      ]);
    } finally {
      await opened.close();
    }
  });
});
