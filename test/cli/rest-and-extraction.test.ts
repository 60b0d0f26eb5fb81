import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runAgent } from "../../src/runner/run-agent.js";
import { type RestTestServer, startRestTestServer } from "../../src/testing/rest-test-server.js";
import type { RecordedRequest } from "../../src/testing/scripted-openai-server.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { localModelProvider } from "./cli-harness.js";

interface WireMessage {
  role: string;
  content?: string;
}

let model: ScriptedOpenAIServer | null = null;
let rest: RestTestServer | null = null;
afterEach(async () => {
  await model?.close();
  await rest?.close();
  model = null;
  rest = null;
});

const report = (content: string): ScriptedStep => ({
  kind: "tool_calls",
  calls: [{ name: "final_report", arguments: { format: "markdown", content } }],
});

async function project(config: Record<string, unknown>, frontmatter: string) {
  const directory = await mkdtemp(join(tmpdir(), "charter-wired-"));
  await writeFile(
    join(directory, "agent.md"),
    `---\nmodels: [local/m]\n${frontmatter}\n---\nYou use tools.\n`,
  );
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({
      providers: localModelProvider(model!.baseUrl),
      ...config,
    }),
  );
  return directory;
}

function messagesOf(request: RecordedRequest): WireMessage[] {
  return (request.body as { messages: WireMessage[] }).messages;
}

describe("REST tools through charter run", () => {
  it("offers rest__<name>, fills the URL placeholders URL-encoded, and returns the response body", async () => {
    rest = await startRestTestServer((request) => ({
      status: 200,
      body: { city: request.query.q, temperature: 21 },
    }));
    model = await startScriptedOpenAIServer({
      respond: (request) => {
        const toolReplies = messagesOf(request).filter((message) => message.role === "tool");
        return toolReplies.length === 0
          ? { kind: "tool_calls", calls: [{ name: "rest__weather", arguments: { city: "São Paulo & Rio" } }] }
          : report(toolReplies[0]!.content ?? "");
      },
    });
    const directory = await project(
      {
        restTools: {
          weather: {
            method: "GET",
            url: `${rest.url}/weather?q=\${parameters.city}`,
            description: "Current weather of a city.",
            parametersSchema: {
              type: "object",
              properties: { city: { type: "string" } },
              required: ["city"],
            },
          },
        },
      },
      "tools: [rest__weather]",
    );
    const result = await runAgent({
      agentPath: join(directory, "agent.md"),
      prompt: "Weather?",
      cwd: directory,
      runsDirectory: join(directory, "runs"),
    });
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(rest.requests[0]).toMatchObject({
      method: "GET",
      path: "/weather",
      query: { q: "São Paulo & Rio" },
    });
    expect(JSON.parse(result.finalReport?.content ?? "{}")).toMatchObject({
      city: "São Paulo & Rio",
      temperature: 21,
    });
    expect(model.requests[0]!.bodyText).toContain('"rest__weather"');
  });
});

describe("tool_output extraction through charter run", () => {
  it("answers an extract question with bounded child runs whose cost is in the parent's accounting", async () => {
    model = await startScriptedOpenAIServer({
      respond: (request) => {
        const messages = messagesOf(request);
        if ((messages[0]?.content ?? "").startsWith("You extract information")) {
          const prompt = messages.find((message) => message.role === "user")?.content ?? "";
          const found = /line 000042 (\S+)/.exec(prompt);
          return {
            kind: "text",
            text: found
              ? `line 42 says ${found[1]}`
              : prompt.includes("Combine")
                ? "line 42 says xxxxx"
                : "not here",
          };
        }
        const toolReplies = messages.filter((message) => message.role === "tool");
        if (toolReplies.length === 0)
          return {
            kind: "tool_calls",
            calls: [{ name: "test__big_output", arguments: { lines: 400, width: 40 } }],
          };
        if (toolReplies.length === 1) {
          const handle = JSON.parse(toolReplies[0]!.content ?? "{}").handle as string;
          return {
            kind: "tool_calls",
            calls: [
              {
                name: "tool_output",
                arguments: { handle, mode: "extract", question: "What does line 42 say?" },
              },
            ],
          };
        }
        return report(toolReplies[1]!.content ?? "");
      },
    });
    const directory = await project(
      {
        mcpServers: {
          test: {
            command: process.execPath,
            args: [join(import.meta.dirname, "../../src/testing/mcp-test-server.ts")],
          },
        },
      },
      "tools: [test]\ntoolResponseMaxBytes: 2000",
    );
    const result = await runAgent({
      agentPath: join(directory, "agent.md"),
      prompt: "Read line 42.",
      cwd: directory,
      runsDirectory: join(directory, "runs"),
    });
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(result.finalReport?.content).toContain("line 42 says");
    const extraction = result.accounting.filter((entry) => entry.callPath.endsWith("/extract"));
    expect(extraction.length).toBeGreaterThan(0);
    expect(extraction.every((entry) => entry.type === "llm")).toBe(true);
  });
});
