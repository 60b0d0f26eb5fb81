import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { cli, recordingWorkspace, records } from "../cli/cli-harness.js";

/**
 * A tool server's question for the user (MCP elicitation) stops a durable run as an approval does; `charter resume
 * --answer` runs the call again and answers the question, against the scripted model and the real MCP test server
 * (whose `deploy` tool asks which environment, and records the deployment it then makes).
 */
let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const deploy: ScriptedStep = {
  kind: "tool_calls",
  calls: [{ id: "call_deploy", name: "test__deploy", arguments: { service: "billing" } }],
};
const reportToolReply: (text: string) => ScriptedStep = (content) => ({
  kind: "tool_calls",
  calls: [{ name: "final_report", arguments: { format: "markdown", content } }],
});

async function setUp() {
  server = await startScriptedOpenAIServer({
    respond: (request) => {
      const messages = (request.body as { messages: { role: string; content?: string }[] }).messages;
      const reply = messages.find((message) => message.role === "tool");
      return reply === undefined ? deploy : reportToolReply(reply.content ?? "");
    },
  });
  const { directory, recordFile } = await recordingWorkspace({
    prefix: "charter-elicitation-",
    baseUrl: server.baseUrl,
    frontmatter: "models: [local/m]\ntools: [test]\nmaxTurns: 4",
    body: "Deploy when asked.",
  });
  const store = join(directory, "charter.db");
  const charter = (argv: readonly string[]) => cli([...argv, "--store", store]);
  const run = () =>
    charter(["run", join(directory, "agent.md"), "Deploy billing.", "--runs-dir", join(directory, "runs")]);
  return { recordFile, charter, run };
}

describe("a tool server's question for the user", () => {
  it("stops the run with the question; --answer runs the call again and gives the server the answer", async () => {
    const { recordFile, charter, run } = await setUp();
    const stopped = await run();
    expect(stopped.exitCode).not.toBe(0);
    expect(stopped.stderr).toContain("pending call_deploy  test__deploy");
    expect(stopped.stderr).toContain("question from test: Which environment should billing go to?");
    expect(stopped.stderr).toContain('"enum":["staging","production"]');
    const runId = /run (run_[0-9a-f]+)/.exec(stopped.stderr)?.[1] ?? "";
    expect(stopped.stderr).toContain(`charter resume ${runId} --answer 'call_deploy={...}'`);
    // Nothing was deployed: the question was cancelled on the server while the run waits.
    expect(await records(recordFile)).toEqual([]);

    const shown = JSON.parse((await charter(["runs", "show", runId, "--json"])).stdout);
    expect(shown.status).toBe("awaiting_approval");

    const resumed = await charter([
      "resume",
      runId,
      "--answer",
      'call_deploy={"environment":"staging"}',
      "--json",
    ]);
    const result = JSON.parse(resumed.stdout) as AIAgentResult;
    expect(result).toMatchObject({
      outcome: "COMPLETED_WITH_TOOLS",
      finalReport: { content: "deployed billing to staging" },
    });
    expect(
      (await records(recordFile)).map((record) => [record.key, (record as { value?: string }).value]),
    ).toEqual([["billing", "staging"]]);
  });

  it("takes a bare answer when the run waits on one question, and decline", async () => {
    const { recordFile, charter, run } = await setUp();
    const stopped = await run();
    const runId = /run (run_[0-9a-f]+)/.exec(stopped.stderr)?.[1] ?? "";
    const resumed = await charter(["resume", runId, "--answer", "decline", "--json"]);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      outcome: "COMPLETED_WITH_TOOLS",
      finalReport: { content: "not deployed: the user chose decline" },
    });
    expect(await records(recordFile)).toEqual([]);
  });

  it("refuses an answer that is not JSON or names no pending question, leaving the run waiting", async () => {
    const { charter, run } = await setUp();
    const stopped = await run();
    const runId = /run (run_[0-9a-f]+)/.exec(stopped.stderr)?.[1] ?? "";
    const notJson = await charter(["resume", runId, "--answer", "call_deploy={environment:", "--json"]);
    expect(notJson.exitCode).not.toBe(0);
    expect(notJson.stderr + notJson.stdout).toContain("ARGUMENT_INVALID");
    const unknown = await charter(["resume", runId, "--answer", 'call_other={"environment":"staging"}']);
    expect(unknown.exitCode).not.toBe(0);
    expect(unknown.stderr + unknown.stdout).toContain("call_other");
    const shown = JSON.parse((await charter(["runs", "show", runId, "--json"])).stdout);
    expect(shown.status).toBe("awaiting_approval");
  });
});
