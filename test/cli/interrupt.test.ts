import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { agentFile, project, providerConfig } from "./cli-harness.js";

const binary = resolve(import.meta.dirname, "../../dist/cli/main.js");
let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe("SIGINT", () => {
  it("interrupts a running `charter run`: outcome INTERRUPTED, a report, exit code 1", async () => {
    let requested: () => void = () => {};
    const firstRequest = new Promise<void>((resolveRequest) => {
      requested = resolveRequest;
    });
    server = await startScriptedOpenAIServer({
      respond: () => {
        requested();
        return { kind: "tool_calls", calls: [{ name: "test__slow", arguments: { ms: 120_000 } }] };
      },
    });
    const files = await project({
      agent: agentFile("models: [local/test-model]\ntools: [test]\ntoolTimeout: 10m"),
      config: providerConfig(server.baseUrl),
      env: "LOCAL_API_KEY=key-for-interrupt-test\n",
    });
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
