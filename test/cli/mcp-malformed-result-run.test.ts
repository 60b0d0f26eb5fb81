import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runAgent } from "../../src/runner/run-agent.js";
import { type McpHttpTestServer, startMcpHttpTestServer } from "../../src/testing/mcp-http-test-server.js";
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { localModelProvider, mcpTestServerPath } from "./cli-harness.js";

/**
 * A tools/call result whose envelope is malformed, from a real MCP server over stdio and Streamable HTTP, ends the
 * run FAILED_VALIDATION naming the tool and what was wrong, as a malformed result of Charter's own tools does: it
 * is not handed to the model as an ordinary tool error.
 */
let model: ScriptedOpenAIServer | null = null;
let remote: McpHttpTestServer | null = null;
afterEach(async () => {
  await model?.close();
  await remote?.close();
  model = null;
  remote = null;
});

const report: ScriptedStep = {
  kind: "tool_calls",
  calls: [{ name: "final_report", arguments: { format: "markdown", content: "done" } }],
};

/** The model calls `tool` with `args` first, then reports (if it is asked again). */
function callThenReport(tool: string, args: Record<string, unknown>) {
  return (request: RecordedRequest): ScriptedStep => {
    const messages = (request.body as { messages: { role: string }[] }).messages;
    return messages.some((message) => message.role === "tool")
      ? report
      : { kind: "tool_calls", calls: [{ id: "call_1", name: tool, arguments: args }] };
  };
}

async function runWith(server: Record<string, unknown>, tool: string, args: Record<string, unknown>) {
  model ??= await startScriptedOpenAIServer({ respond: callThenReport(tool, args) });
  const directory = await mkdtemp(join(tmpdir(), "charter-mcp-malformed-"));
  await writeFile(join(directory, "agent.md"), "---\nmodels: [local/m]\ntools: [source]\n---\nUse tools.\n");
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({ providers: localModelProvider(model.baseUrl), mcpServers: { source: server } }),
  );
  return runAgent({
    agentPath: join(directory, "agent.md"),
    prompt: "Go.",
    cwd: directory,
    runsDirectory: join(directory, "runs"),
    store: join(directory, "runs.db"),
  });
}

const stdio = { type: "stdio", command: process.execPath, args: [mcpTestServerPath] };

/** What each broken envelope is reported as. */
const problems: Record<string, string> = {
  content_not_array: "content is not an array",
  unknown_content_type: 'content[1].type "video" is not an MCP content type',
  missing_field: "content[0].data",
  is_error_not_boolean: "isError",
};

describe("a malformed tools/call result from an MCP server", () => {
  for (const [kind, problem] of Object.entries(problems)) {
    it(`over stdio (${kind}) ends the run FAILED_VALIDATION naming the tool and the problem`, async () => {
      const result = await runWith(stdio, "source__malformed_result", { kind });
      expect(result.outcome).toBe("FAILED_VALIDATION");
      expect(result.success).toBe(false);
      expect(result.error?.code).toBe("TOOL_RESULT_INVALID");
      expect(result.error?.message).toContain("source__malformed_result");
      expect(result.error?.message).toContain("malformed_result with a malformed result");
      expect(result.error?.message).toContain(problem);
      // The model was never asked again: the run ended at that turn's COMMIT.
      expect(model!.requests).toHaveLength(1);
    });
  }

  it("over Streamable HTTP ends the run FAILED_VALIDATION naming the tool and the problem", async () => {
    remote = await startMcpHttpTestServer();
    const result = await runWith(
      { type: "http", url: remote.streamableHttpUrl },
      "source__malformed_result",
      { kind: "unknown_content_type" },
    );
    expect(result).toMatchObject({ outcome: "FAILED_VALIDATION", error: { code: "TOOL_RESULT_INVALID" } });
    expect(result.error?.message).toContain("source__malformed_result");
    expect(result.error?.message).toContain(problems.unknown_content_type);
    expect(remote.executedCalls).toEqual([
      { tool: "malformed_result", arguments: { kind: "unknown_content_type" } },
    ]);
  });

  it("leaves a well-formed result, and a tool error the server reports, to the model as before", async () => {
    const echoed = await runWith(stdio, "source__echo", { text: "hello" });
    expect(echoed.outcome).toBe("COMPLETED_WITH_TOOLS");
    await model?.close();
    model = null;
    const failed = await runWith(stdio, "source__fail", { message: "no such order" });
    expect(failed.outcome).toBe("COMPLETED_WITH_TOOLS");
    const tool = failed.conversation.find((message) => message.role === "tool");
    expect(tool?.content).toContain("no such order");
  });
});
