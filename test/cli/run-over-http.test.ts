import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { agentFile, cli, project, providerConfig } from "./cli-harness.js";

const secret = "sk-test-5f1e2d3c4b5a69788796a5b4c3d2e1f0";
let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function setUp(script: ScriptedStep[], frontmatter: string) {
  server = await startScriptedOpenAIServer({ script });
  const files = await project({
    agent: agentFile(frontmatter),
    config: providerConfig(server.baseUrl),
    env: `LOCAL_API_KEY=${secret}\n`,
  });
  return files;
}

async function readTree(directory: string): Promise<string> {
  let text = "";
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) text += await readFile(join(entry.parentPath, entry.name), "utf8");
  }
  return text;
}

describe("charter run against a real OpenAI-compatible HTTP server and a real MCP stdio server", () => {
  // The accounting fields are seed 000 §7's.
  it("runs a multi-turn tool session; --json prints exactly one AIAgentResult with its accounting entries", async () => {
    const files = await setUp(
      [
        { kind: "tool_calls", calls: [{ name: "test__add", arguments: { a: 2, b: 3 } }] },
        {
          kind: "tool_calls",
          calls: [{ name: "final_report", arguments: { format: "markdown", content: "2 + 3 = 5" } }],
        },
      ],
      "models: [local/test-model]\ntools: [test]\ntoolPolicy: required",
    );
    const run = await cli([
      "run",
      files.agentPath,
      "Add 2 and 3.",
      "--config",
      files.configPath,
      "--json",
      "--runs-dir",
      files.runsDirectory,
    ]);
    expect(run.exitCode).toBe(0);
    const result = JSON.parse(run.stdout) as AIAgentResult;
    expect(run.stdout.trim().split("\n")).toHaveLength(1);
    expect(result).toMatchObject({
      success: true,
      outcome: "COMPLETED_WITH_TOOLS",
      finalReport: { content: "2 + 3 = 5", status: "success" },
    });
    const toolReply = result.conversation.find((message) => message.role === "tool");
    expect(toolReply?.content).toBe("5");
    const llm = result.accounting.find((entry) => entry.type === "llm")!;
    expect(Object.keys(llm)).toEqual(
      expect.arrayContaining([
        "type",
        "provider",
        "model",
        "status",
        "latency",
        "tokens",
        "timestamp",
        "agentId",
        "callPath",
        "txnId",
      ]),
    );
    const tool = result.accounting.find((entry) => entry.type === "tool")!;
    expect(tool).toMatchObject({ mcpServer: "test", command: "add", status: "ok" });
    expect(Object.keys(tool)).toEqual(
      expect.arrayContaining(["charactersIn", "charactersOut", "latency", "timestamp"]),
    );
    expect(server!.remaining()).toBe(0);
    // verify recomputes the chain of the run directory.
    const verified = await cli(["verify", result.runId, "--runs-dir", files.runsDirectory]);
    expect(verified.exitCode).toBe(0);
  });

  it("sends configured request parameters exactly and omits null ones (no 'config ignored')", async () => {
    const files = await setUp(
      [{ kind: "text", text: "hello" }],
      "models: [local/test-model]\ntemperature: 0.5\ntopP: null\nmaxOutputTokens: 321\nseed: 7\nstopSequences: [END]",
    );
    const run = await cli([
      "run",
      files.agentPath,
      "Say hello.",
      "--config",
      files.configPath,
      "--runs-dir",
      files.runsDirectory,
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe("hello\n");
    const body = server!.requests[0]!.body as Record<string, unknown>;
    expect(body.temperature).toBe(0.5);
    expect(body).not.toHaveProperty("top_p");
    expect(body.max_tokens).toBe(321);
    expect(body.seed).toBe(7);
    expect(body.stop).toEqual(["END"]);
  });

  it("--set overrides reach the wire too", async () => {
    const files = await setUp([{ kind: "text", text: "hi" }], "models: [local/test-model]\ntemperature: 0.5");
    await cli([
      "run",
      files.agentPath,
      "hi",
      "--config",
      files.configPath,
      "--set",
      "temperature=0.1",
      "--runs-dir",
      files.runsDirectory,
    ]);
    expect((server!.requests[0]!.body as Record<string, unknown>).temperature).toBe(0.1);
  });

  it("never writes secrets from .charter.env: not in the result, the run directory or stderr", async () => {
    const files = await setUp(
      [
        { kind: "tool_calls", calls: [{ name: "test__echo", arguments: { text: `leak ${secret}` } }] },
        { kind: "text", text: `the key is ${secret}` },
      ],
      "models: [local/test-model]\ntools: [test]",
    );
    const run = await cli([
      "run",
      files.agentPath,
      "Echo.",
      "--config",
      files.configPath,
      "--json",
      "--runs-dir",
      files.runsDirectory,
    ]);
    expect(server!.requests[0]!.headers.authorization).toBe(`Bearer ${secret}`);
    const result = JSON.parse(run.stdout) as AIAgentResult;
    const runFiles = await readTree(join(files.runsDirectory, result.runId));
    expect(runFiles).toContain("[REDACTED");
    expect(runFiles).not.toContain(secret);
    expect(run.stderr).not.toContain(secret);
  });

  it("exit code 1 (never 0) when the session fails", async () => {
    const files = await setUp(
      [{ kind: "text", text: "I refuse to use tools." }],
      "models: [local/test-model]\ntools: [test]\ntoolPolicy: required\nmaxFormatRetries: 0",
    );
    const run = await cli([
      "run",
      files.agentPath,
      "Do it.",
      "--config",
      files.configPath,
      "--runs-dir",
      files.runsDirectory,
    ]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("FAILED_PROTOCOL_NO_TOOLS");
  });

  it("exit code 5 when the final report fails the output schema", async () => {
    const files = await setUp(
      [
        {
          kind: "tool_calls",
          calls: [{ name: "final_report", arguments: { format: "json", content_json: { wrong: true } } }],
        },
      ],
      "models: [local/test-model]\nmaxFormatRetries: 0\noutput:\n  format: json\n  schema: {type: object, required: [answer], properties: {answer: {type: string}}}",
    );
    const run = await cli([
      "run",
      files.agentPath,
      "Answer.",
      "--config",
      files.configPath,
      "--runs-dir",
      files.runsDirectory,
    ]);
    expect(run.exitCode).toBe(5);
  });

  it("exit code 3 when an MCP server cannot start", async () => {
    server = await startScriptedOpenAIServer({ script: [] });
    const config = providerConfig(server.baseUrl);
    (config.mcpServers.test as Record<string, unknown>).env = { CHARTER_TEST_MCP_FAIL_START: "1" };
    const files = await project({
      agent: agentFile("models: [local/test-model]\ntools: [test]"),
      config,
      env: `LOCAL_API_KEY=${secret}\n`,
    });
    const run = await cli([
      "run",
      files.agentPath,
      "x",
      "--config",
      files.configPath,
      "--json",
      "--runs-dir",
      files.runsDirectory,
    ]);
    expect(run.exitCode).toBe(3);
    expect(JSON.parse(run.stdout)).toMatchObject({
      outcome: "FAILED_PREFLIGHT",
      error: { code: "MCP_SERVER_FAILED" },
    });
    expect(server.requests).toHaveLength(0);
  });

  it("exit code 4 for an unknown agent-file key (naming key and file), an unresolved variable, or bad arguments", async () => {
    server = await startScriptedOpenAIServer({ script: [] });
    const unknownKey = await project({
      agent: agentFile("models: [local/test-model]\nmaxTurnz: 3"),
      config: providerConfig(server.baseUrl),
      env: "LOCAL_API_KEY=k\n",
    });
    const first = await cli(["run", unknownKey.agentPath, "x", "--config", unknownKey.configPath, "--json"]);
    expect(first.exitCode).toBe(4);
    const firstResult = JSON.parse(first.stdout) as AIAgentResult;
    expect(firstResult.error?.code).toBe("AGENT_FILE_INVALID");
    expect(firstResult.error?.message).toContain("maxTurnz");
    expect(firstResult.error?.message).toContain(unknownKey.agentPath);

    const unresolved = await project({
      agent: agentFile("models: [local/test-model]"),
      config: providerConfig(server.baseUrl),
    });
    const second = await cli(
      ["run", unresolved.agentPath, "x", "--config", unresolved.configPath, "--json"],
      {},
    );
    expect(second.exitCode).toBe(4);
    expect((JSON.parse(second.stdout) as AIAgentResult).error?.code).toBe("ENVIRONMENT_VARIABLE_UNRESOLVED");

    expect((await cli(["run"])).exitCode).toBe(4);
    expect((await cli(["frobnicate"])).exitCode).toBe(4);
    expect((await cli(["run", unknownKey.agentPath, "x", "--no-such-flag"])).exitCode).toBe(4);
    expect(server.requests).toHaveLength(0);
  });

  it("reads the prompt from stdin with '-'", async () => {
    const files = await setUp([{ kind: "text", text: "from stdin" }], "models: [local/test-model]");
    const run = await cli(
      ["run", files.agentPath, "-", "--config", files.configPath, "--runs-dir", files.runsDirectory],
      { stdin: "What is on stdin?" },
    );
    expect(run.exitCode).toBe(0);
    const body = server!.requests[0]!.body as { messages: { role: string; content: string }[] };
    expect(body.messages.find((message) => message.role === "user")?.content).toBe("What is on stdin?");
  });
});

describe("charter run --stream", () => {
  it("uses the streaming endpoint and prints text as it arrives, once", async () => {
    server = await startScriptedOpenAIServer({
      script: [{ kind: "text", text: "streamed hello world", stream: { chunkSize: 4 } }],
    });
    const files = await project({
      agent: agentFile("models: [local/test-model]"),
      config: providerConfig(server.baseUrl),
      env: "LOCAL_API_KEY=key-for-stream-test\n",
    });
    const run = await cli([
      "run",
      files.agentPath,
      "Stream.",
      "--config",
      files.configPath,
      "--stream",
      "--runs-dir",
      files.runsDirectory,
    ]);
    expect(run.exitCode).toBe(0);
    expect((server.requests[0]!.body as { stream?: boolean }).stream).toBe(true);
    expect(run.stdout).toBe("streamed hello world\n");
  });
});

describe("charter run --stream with a tool call", () => {
  it("prints the tool call on stderr with the secret redacted", async () => {
    server = await startScriptedOpenAIServer({
      script: [
        {
          kind: "tool_calls",
          calls: [{ name: "test__echo", arguments: { text: `leak ${secret}` } }],
          stream: { chunkSize: 8 },
        },
        { kind: "text", text: "done", stream: { chunkSize: 4 } },
      ],
    });
    const files = await project({
      agent: agentFile("models: [local/test-model]\ntools: [test]"),
      config: providerConfig(server.baseUrl),
      env: `LOCAL_API_KEY=${secret}\n`,
    });
    const run = await cli([
      "run",
      files.agentPath,
      "Echo.",
      "--config",
      files.configPath,
      "--stream",
      "--runs-dir",
      files.runsDirectory,
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain('[tool] test__echo {"text":"leak [REDACTED:');
    expect(run.stderr).not.toContain(secret);
  });
});

describe("a stream cut mid-way", () => {
  it("is a failed attempt that is retried, and what arrived before the cut is kept in the transcript", async () => {
    server = await startScriptedOpenAIServer({
      script: [
        {
          kind: "text",
          text: "partial answer that never finishes",
          stream: { chunkSize: 5, cutAfterChunks: 3 },
        },
        { kind: "text", text: "complete answer", stream: { chunkSize: 5 } },
      ],
    });
    const files = await project({
      agent: agentFile("models: [local/test-model]\nmaxRetries: 2"),
      config: providerConfig(server.baseUrl),
      env: "LOCAL_API_KEY=key-for-cut-test\n",
    });
    const run = await cli([
      "run",
      files.agentPath,
      "Stream.",
      "--config",
      files.configPath,
      "--stream",
      "--json",
      "--runs-dir",
      files.runsDirectory,
    ]);
    const result = JSON.parse(run.stdout) as AIAgentResult;
    expect(result).toMatchObject({ success: true, finalReport: { content: "complete answer" } });
    expect(result.accounting.filter((entry) => entry.type === "llm").map((entry) => entry.status)).toEqual([
      "failed",
      "ok",
    ]);
    const stored = await readTree(join(files.runsDirectory, result.runId));
    expect(stored).toContain("partial_response");
    expect(stored).toContain("parti");
  });
});
