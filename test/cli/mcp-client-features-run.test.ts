import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { runAgent } from "../../src/runner/run-agent.js";
import type { RecordedRequest } from "../../src/testing/scripted-openai-server.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { localModelProvider, mcpTestServerPath } from "./cli-harness.js";

interface WireMessage {
  role: string;
  content?: string;
}

let model: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await model?.close();
  model = null;
});

const report = (content: string): ScriptedStep => ({
  kind: "tool_calls",
  calls: [{ name: "final_report", arguments: { format: "markdown", content } }],
});

function messagesOf(request: RecordedRequest): WireMessage[] {
  return (request.body as { messages: WireMessage[] }).messages;
}

async function project(frontmatter: string, server: Record<string, unknown> = {}) {
  const directory = await mkdtemp(join(tmpdir(), "charter-mcp-features-"));
  await writeFile(
    join(directory, "agent.md"),
    `---\nmodels: [local/m]\n${frontmatter}\n---\nYou use tools.\n`,
  );
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({
      providers: localModelProvider(model!.baseUrl),
      mcpServers: { test: { command: process.execPath, args: [mcpTestServerPath], ...server } },
    }),
  );
  return directory;
}

/** The model calls `tool` once, then reports what the tool answered. */
function callThenReport(tool: string, args: Record<string, unknown>) {
  return (request: RecordedRequest): ScriptedStep => {
    const toolReplies = messagesOf(request).filter((message) => message.role === "tool");
    return toolReplies.length === 0
      ? { kind: "tool_calls", calls: [{ name: tool, arguments: args }] }
      : report(toolReplies[0]!.content ?? "");
  };
}

describe("MCP client features in a run", () => {
  it("serves a server's sampling request with the run's model, accounted in the run", async () => {
    const agentTurns = callThenReport("test__sample", { text: "Summarize: the sky is blue." });
    model = await startScriptedOpenAIServer({
      respond: (request) => {
        const messages = messagesOf(request);
        if (messages[0]?.content === "You answer for the charter-test server.") {
          return { kind: "text", text: `sampled: ${messages[1]?.content ?? ""}` };
        }
        return agentTurns(request);
      },
    });
    const directory = await project("tools: [test]");
    const result = await runAgent({
      agentPath: join(directory, "agent.md"),
      prompt: "Use the sampling tool.",
      cwd: directory,
      runsDirectory: join(directory, "runs"),
    });
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(JSON.parse(result.finalReport?.content ?? "{}")).toEqual({
      answers: ["sampled: User: Summarize: the sky is blue."],
    });
    // The sampling request reached the scripted model as its own one-turn request, with the server's limit.
    const samplingRequest = model.requests.find(
      (request) => messagesOf(request)[0]?.content === "You answer for the charter-test server.",
    );
    expect(samplingRequest?.body).toMatchObject({ max_tokens: 200 });
    const sampling = result.accounting.filter((entry) => entry.callPath.endsWith("/sampling/test"));
    expect(sampling).toHaveLength(1);
    expect(sampling[0]).toMatchObject({ type: "llm", status: "ok" });
    // Three model calls in all: the agent's two turns and the sampling request.
    expect(result.accounting.filter((entry) => entry.type === "llm")).toHaveLength(3);
  });

  it("offers the run's working directory as the server's root", async () => {
    model = await startScriptedOpenAIServer({ respond: callThenReport("test__list_roots", {}) });
    const directory = await project("tools: [test]");
    const result = await runAgent({
      agentPath: join(directory, "agent.md"),
      prompt: "List the roots.",
      cwd: directory,
      runsDirectory: join(directory, "runs"),
    });
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(JSON.parse(result.finalReport?.content ?? "[]")).toEqual([
      { uri: pathToFileURL(directory).href, name: directory.split("/").at(-1) },
    ]);
  });

  it("does not offer a task-only tool to the model", async () => {
    model = await startScriptedOpenAIServer({ respond: () => report("done") });
    const directory = await project("tools: [test]");
    const result = await runAgent({
      agentPath: join(directory, "agent.md"),
      prompt: "Nothing to do.",
      cwd: directory,
      runsDirectory: join(directory, "runs"),
    });
    expect(result.outcome).toBe("COMPLETED_CHAT_ONLY");
    const offered = (model.requests[0]!.body as { tools: { function: { name: string } }[] }).tools.map(
      (tool) => tool.function.name,
    );
    expect(offered).toContain("test__echo");
    expect(offered).not.toContain("test__long_job");
  });
});
