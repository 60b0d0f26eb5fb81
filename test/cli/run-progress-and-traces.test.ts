import { afterEach, describe, expect, it } from "vitest";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { agentFile, charterProcess, project, providerConfig } from "./cli-harness.js";

const secret = "sk-test-progress-9a8b7c6d5e4f3a2b1c0d";
// Each test starts real `charter` processes (and an MCP server): generous on a loaded machine.
const processTimeout = 180_000;
const ansiEscape = "\u001b[";
/** A duration as progress prints it: milliseconds under a second, else seconds with one decimal. */
let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/**
 * Two targets (so the failed first attempt falls back at once, without a real wait), an MCP tool call whose
 * arguments carry the secret from .charter.env, and a final report.
 */
async function setUp() {
  server = await startScriptedOpenAIServer({
    script: [
      { kind: "error", status: 500 },
      { kind: "tool_calls", calls: [{ name: "test__echo", arguments: { text: `the key ${secret}` } }] },
      {
        kind: "tool_calls",
        calls: [{ name: "final_report", arguments: { format: "markdown", content: "echoed" } }],
      },
    ],
  });
  const config = providerConfig(server.baseUrl);
  (config.providers.local.models as Record<string, unknown>)["other-model"] = { contextWindow: 32000 };
  return project({
    agent: agentFile("models: [local/test-model, local/other-model]\ntools: [test]\ntoolPolicy: required"),
    config,
    env: `LOCAL_API_KEY=${secret}\n`,
  });
}

describe("following a run on stderr", () => {
  it(
    "--progress: each turn, the failed attempt and the fallback, each tool call with status and duration, a summary; plain when NO_COLOR",
    async () => {
      const files = await setUp();
      const run = await charterProcess(
        [
          "run",
          files.agentPath,
          "Echo.",
          "--config",
          files.configPath,
          "--runs-dir",
          files.runsDirectory,
          "--progress",
        ],
        { cwd: files.directory, env: { NO_COLOR: "1", FORCE_COLOR: "1" } },
      );
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toBe("echoed\n");
      const lines = run.stderr.split("\n");
      expect(lines).toContain("charter: turn 1 of 10");
      expect(run.stderr).toMatch(
        /charter: {3}model local\/test-model failed MODEL_SERVER_ERROR (\d+ ms|\d+\.\d s)\n/,
      );
      expect(lines).toContain("charter:   fallback: attempt 2 of 3 with local/other-model");
      expect(run.stderr).toMatch(/charter: {3}tool test__echo ok (\d+ ms|\d+\.\d s)\n/);
      expect(run.stderr).toMatch(
        /charter: COMPLETED_WITH_TOOLS: 2 turns, 1 tool call, \d+ tokens \(\d+ in \/ \d+ out\), \d+\.\d s\n$/,
      );
      // NO_COLOR wins over FORCE_COLOR; progress alone shows no arguments or results.
      expect(run.stderr).not.toContain(ansiEscape);
      expect(run.stderr).not.toContain("the key");
      expect(run.stderr).not.toContain(secret);
    },
    processTimeout,
  );

  it(
    "--verbose, --trace-llm and --trace-mcp show requests, responses, arguments and raw traffic, redacted; FORCE_COLOR colours",
    async () => {
      const files = await setUp();
      const run = await charterProcess(
        [
          "run",
          files.agentPath,
          "Echo.",
          "--config",
          files.configPath,
          "--runs-dir",
          files.runsDirectory,
          "--json",
          "--verbose",
          "--trace-llm",
          "--trace-mcp",
        ],
        { cwd: files.directory, env: { FORCE_COLOR: "1", NO_COLOR: undefined } },
      );
      expect(run.exitCode).toBe(0);
      const result = JSON.parse(run.stdout) as AIAgentResult;
      const stderr = run.stderr;
      // The secret from .charter.env reached the model server and the tool, and is printed nowhere.
      expect(server!.requests[0]!.headers.authorization).toBe(`Bearer ${secret}`);
      expect(stderr).not.toContain(secret);
      expect(stderr).toContain(ansiEscape);
      // --verbose: each request (target, messages, tokens), each response, each tool call's arguments and result.
      expect(stderr).toMatch(/request to local\/test-model: 2 messages, \d+ tools, ~\d+ tokens/);
      expect(stderr).toMatch(/request to local\/other-model: 2 messages/);
      expect(stderr).toContain("response: tool calls test__echo");
      expect(stderr).toContain('tool test__echo {"text":"the key [REDACTED:');
      expect(stderr).toContain("result of test__echo: the key [REDACTED:");
      // --trace-llm: the HTTP exchanges, headers and bodies, with the key redacted.
      expect(stderr).toMatch(
        /\[llm local\/test-model #1\] >> POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions/,
      );
      expect(stderr).toMatch(/"authorization":"\[REDACTED[^"]*\]"/);
      expect(stderr).toMatch(/\[llm local\/test-model #1\] << 500/);
      expect(stderr).toMatch(/\[llm local\/other-model #1\] << 200/);
      // --trace-mcp: the JSON-RPC messages both ways, the call's arguments redacted.
      expect(stderr).toMatch(/\[mcp test\] >> \{"method":"initialize"/);
      expect(stderr).toMatch(/\[mcp test\] << \{"jsonrpc":"2\.0","id":0,"result":\{"protocolVersion"/);
      expect(stderr).toMatch(
        /\[mcp test\] >> \{"method":"tools\/call","params":\{"name":"echo","arguments":\{"text":"the key \[REDACTED/,
      );

      // The same run read back as a conversation, in text and as JSON.
      const shown = await charterProcess(["runs", "show", result.runId, "--conversation"], {
        cwd: files.directory,
      });
      expect(shown.exitCode).toBe(0);
      expect(shown.stdout).toContain("[user]\nEcho.\n");
      expect(shown.stdout).toMatch(/== turn 1: \d+ in \/ \d+ out tokens, \d+ ms\n/);
      expect(shown.stdout).toMatch(
        / {2}attempt 1 local\/test-model failed \d+ ms MODEL_SERVER_ERROR: model call to local\/test-model failed: HTTP 500\n/,
      );
      expect(shown.stdout).toContain("[assistant local/other-model]\n");
      expect(shown.stdout).toContain('  -> test__echo {"text":"the key [REDACTED:');
      expect(shown.stdout).toMatch(/ {2}<- ok \d+ ms: the key \[REDACTED:/);
      expect(shown.stdout).toContain("== COMPLETED_WITH_TOOLS\n[final report]\nechoed\n");
      expect(shown.stdout).not.toContain(secret);
      const json = await charterProcess(["runs", "show", result.runId, "--conversation", "--json"], {
        cwd: files.directory,
      });
      const view = JSON.parse(json.stdout);
      expect(view).toMatchObject({
        runId: result.runId,
        outcome: "COMPLETED_WITH_TOOLS",
        opening: [{ role: "system" }, { role: "user", content: "Echo." }],
        turns: [
          {
            turn: 1,
            attempts: [
              { attempt: 1, target: "local/test-model", status: "failed", errorCode: "MODEL_SERVER_ERROR" },
              { attempt: 2, target: "local/other-model", status: "ok" },
            ],
            toolCalls: [{ name: "test__echo", status: "ok", errorCode: null }],
          },
          { turn: 2, toolCalls: [{ name: "final_report" }] },
        ],
      });
      const [first] = view.turns;
      expect(first.tokens.input).toBeGreaterThan(0);
      expect(first.latencyMs).toBeGreaterThan(0);
      expect(first.attempts[1].latencyMs).toBeGreaterThan(0);
      expect(first.toolCalls[0].latencyMs).toBeGreaterThan(0);
      expect(json.stdout).not.toContain(secret);
    },
    processTimeout,
  );
});
