import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runAgent } from "../../src/runner/run-agent.js";
import { type McpHttpTestServer, startMcpHttpTestServer } from "../../src/testing/mcp-http-test-server.js";
import { type RestTestServer, startRestTestServer } from "../../src/testing/rest-test-server.js";
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { localModelProvider, mcpTestServerPath } from "../cli/cli-harness.js";

/**
 * A run's correlation id reaches every tool it calls, as the tools' servers received it: the `x-correlation-id`
 * header on every REST request and every HTTP request to a remote MCP server (Streamable HTTP and SSE), and
 * `_meta["charter/correlationId"]` in every MCP `tools/call` (stdio too). A sub-agent's tools get the same id.
 */
let model: ScriptedOpenAIServer | null = null;
let rest: RestTestServer | null = null;
let remote: McpHttpTestServer | null = null;
afterEach(async () => {
  await model?.close();
  await rest?.close();
  await remote?.close();
  model = null;
  rest = null;
  remote = null;
});

interface WireMessage {
  role: string;
  content?: string;
  tool_call_id?: string;
}

const messagesOf = (request: RecordedRequest) => (request.body as { messages: WireMessage[] }).messages;
const report = (content: string): ScriptedStep => ({
  kind: "tool_calls",
  calls: [{ name: "final_report", arguments: { format: "markdown", content } }],
});
const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({
  id,
  name,
  arguments: args,
});

/** Each agent calls its tools in its first turn and reports in its second; the child's prompt names it. */
function respond(request: RecordedRequest): ScriptedStep {
  const messages = messagesOf(request);
  const isChild = messages[0]?.content?.includes("I am child") === true;
  if (messages.some((message) => message.role === "tool")) return report(isChild ? "child" : "parent");
  return isChild
    ? {
        kind: "tool_calls",
        calls: [call("c1", "local__request_meta"), call("c2", "remote__echo", { text: "x" })],
      }
    : {
        kind: "tool_calls",
        calls: [
          call("p1", "rest__lookup", { id: "7" }),
          call("p2", "remote__request_meta"),
          call("p3", "legacy__request_meta"),
          call("p4", "local__request_meta"),
          call("p5", "agent__child", { prompt: "Help." }),
        ],
      };
}

/** What a tool answered the agent whose prompt contains `agent`, by call id, from the model's second request. */
function toolAnswers(agent: string): Record<string, string> {
  const request = model!.requests.find((recorded) => {
    const messages = messagesOf(recorded);
    return messages[0]?.content?.includes(agent) && messages.some((message) => message.role === "tool");
  });
  const answers: Record<string, string> = {};
  for (const message of messagesOf(request!)) {
    if (message.role === "tool") answers[message.tool_call_id!] = message.content ?? "";
  }
  return answers;
}

async function startProject(correlationId?: string) {
  model = await startScriptedOpenAIServer({ respond });
  rest = await startRestTestServer();
  remote = await startMcpHttpTestServer();
  const directory = await mkdtemp(join(tmpdir(), "charter-correlation-"));
  await writeFile(
    join(directory, "parent.md"),
    "---\nmodels: [local/m]\ntools: [lookup, remote, legacy, local]\nagents: [./child.md]\n---\nI am parent.\n",
  );
  await writeFile(
    join(directory, "child.md"),
    "---\nmodels: [local/m]\ntools: [local, remote]\n---\nI am child.\n",
  );
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({
      providers: localModelProvider(model.baseUrl),
      mcpServers: {
        remote: { type: "http", url: remote.streamableHttpUrl },
        legacy: { type: "sse", url: remote.sseUrl },
        local: { type: "stdio", command: process.execPath, args: [mcpTestServerPath] },
      },
      restTools: {
        lookup: {
          method: "GET",
          url: `${rest.url}/items/\${parameters.id}`,
          parametersSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
        },
      },
    }),
  );
  return runAgent({
    agentPath: join(directory, "parent.md"),
    prompt: "Look it up.",
    cwd: directory,
    runsDirectory: join(directory, "runs"),
    store: join(directory, "runs.db"),
    ...(correlationId === undefined ? {} : { correlationId }),
  });
}

describe("the correlation id sent to tools", () => {
  it("reaches REST tools and MCP servers over every transport, the sub-agent's tools included", async () => {
    const result = await startProject("req-42");
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");

    expect(rest!.requests).toHaveLength(1);
    expect(rest!.requests[0]!.headers["x-correlation-id"]).toBe("req-42");

    // Every HTTP request of both remote transports (initialize, the SSE stream's GET, each POST, the session's
    // DELETE), the parent's sessions and the child's alike.
    const byPath = (path: string) => remote!.requests.filter((request) => request.path === path);
    expect(byPath("/mcp").length).toBeGreaterThan(0);
    expect(byPath("/sse").length).toBeGreaterThan(0);
    expect(byPath("/messages").length).toBeGreaterThan(0);
    expect(new Set(byPath("/mcp").map((request) => request.sessionId)).size).toBeGreaterThanOrEqual(2);
    for (const request of remote!.requests) expect(request.headers["x-correlation-id"]).toBe("req-42");
    expect(remote!.executedCalls.map((executed) => executed.tool).sort()).toEqual([
      "echo",
      "request_meta",
      "request_meta",
    ]);

    // What each MCP server found in the tools/call request's _meta, as it answered it.
    const meta = { "charter/correlationId": "req-42" };
    const parent = toolAnswers("I am parent");
    expect(JSON.parse(parent.p2!)).toMatchObject(meta);
    expect(JSON.parse(parent.p3!)).toMatchObject(meta);
    expect(JSON.parse(parent.p4!)).toMatchObject(meta);
    expect(JSON.parse(toolAnswers("I am child").c1!)).toMatchObject(meta);
  });

  it("sends neither the header nor the _meta key when the run has no correlation id", async () => {
    const result = await startProject();
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(rest!.requests[0]!.headers).not.toHaveProperty("x-correlation-id");
    for (const request of remote!.requests) expect(request.headers).not.toHaveProperty("x-correlation-id");
    const parent = toolAnswers("I am parent");
    for (const id of ["p2", "p3", "p4"])
      expect(JSON.parse(parent[id]!)).not.toHaveProperty("charter/correlationId");
  });

  it("refuses a correlation id no HTTP header can carry before anything starts", async () => {
    for (const correlationId of ["", "req\r\nx-admin: 1", " padded", "é", "x".repeat(257)]) {
      const result = await runAgent({
        agentPath: "never-read.md",
        prompt: "Go.",
        correlationId,
        store: join(await mkdtemp(join(tmpdir(), "charter-correlation-")), "runs.db"),
      });
      expect(result.outcome).toBe("FAILED_PREFLIGHT");
      expect(result.error).toMatchObject({
        code: "ARGUMENT_INVALID",
        details: { argument: "correlationId" },
      });
    }
  });
});
