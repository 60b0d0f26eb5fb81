import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { delayStep } from "../../src/testing/scripted-openai-step.js";
import { agentFile, busyRunProject, project, providerConfig } from "./cli-harness.js";

const binary = resolve(import.meta.dirname, "../../dist/cli/main.js");
let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe("SIGINT", () => {
  it("interrupts a running `charter run`: outcome INTERRUPTED, a report, exit code 1", async () => {
    const busy = await busyRunProject("key-for-interrupt-test");
    server = busy.server;
    const { firstRequest, files } = busy;
    const child = spawn(
      process.execPath,
      [
        binary,
        "run",
        files.agentPath,
        "Wait.",
        "--config",
        files.configPath,
        "--json",
        "--runs-dir",
        files.runsDirectory,
      ],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    const exited = new Promise<number | null>((resolveExit) => child.on("exit", (code) => resolveExit(code)));
    await firstRequest;
    child.kill("SIGINT");
    const exitCode = await exited;
    const result = JSON.parse(stdout) as AIAgentResult;
    expect(result.outcome).toBe("INTERRUPTED");
    expect(result.success).toBe(false);
    expect(result.finalReport?.status).toBe("failure");
    expect(exitCode).toBe(1);
  });
});

describe("SIGTERM", () => {
  it("is honoured after a huge tool output without spaces: the run is never stalled counting it", async () => {
    // 1 MB in one run of letters: token counting used to take minutes on such text, with signals ignored meanwhile.
    let secondRequest: () => void = () => {};
    const reachedSecond = new Promise<void>((resolveRequest) => {
      secondRequest = resolveRequest;
    });
    server = await startScriptedOpenAIServer({
      respond: (_request, index) => {
        if (index === 0) {
          return {
            kind: "tool_calls",
            calls: [{ name: "test__big_output", arguments: { lines: 1, width: 1_000_000 } }],
          };
        }
        secondRequest();
        // The next inference never answers: only the signal ends the run.
        return delayStep(3_600_000, { kind: "text", text: "too late" });
      },
    });
    const files = await project({
      agent: agentFile("models: [local/test-model]\ntools: [test]"),
      config: providerConfig(server.baseUrl),
      env: "LOCAL_API_KEY=key-for-sigterm-test\n",
    });
    const child = spawn(
      process.execPath,
      [
        binary,
        "run",
        files.agentPath,
        "Go.",
        "--config",
        files.configPath,
        "--json",
        "--runs-dir",
        files.runsDirectory,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    const exited = new Promise<number | null>((resolveExit) => child.on("exit", (code) => resolveExit(code)));
    // The huge output has been stored and counted once the model is asked again.
    await reachedSecond;
    child.kill("SIGTERM");
    const exitCode = await exited;
    const result = JSON.parse(stdout) as AIAgentResult;
    expect(result.outcome).toBe("INTERRUPTED");
    expect(result.finalReport?.status).toBe("failure");
    expect(exitCode).toBe(1);
    // The output was stored behind a handle whose token estimate is in the conversation.
    const toolReply = result.conversation.find((message) => message.role === "tool");
    expect(toolReply?.content).toContain("tool_output");
  });
});
