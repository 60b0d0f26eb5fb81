import { spawn } from "node:child_process";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import {
  agentFile,
  busyRunProject,
  charterBinary,
  charterProcess,
  project,
  providerConfig,
} from "./cli-harness.js";

const secret = "sk-test-stop-diagnostics-2c4e6a8b0d1f3e5a";
// Each test starts real `charter` processes (and MCP servers): generous on a loaded machine.
const processTimeout = 180_000;
let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/** A loopback port nothing listens on: a connection to it is refused. */
async function closedPort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const { port } = listener.address() as AddressInfo;
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  return port;
}

describe("a run that never reaches its model", () => {
  it(
    "names the URL and the cause, says the model was never reached, and how to inspect the run",
    async () => {
      const port = await closedPort();
      const files = await project({
        agent: agentFile("models: [local/test-model]\nmaxRetries: 1"),
        config: providerConfig(`http://127.0.0.1:${port}/v1`),
        env: `LOCAL_API_KEY=${secret}\n`,
      });
      const url = `http://127.0.0.1:${port}/v1/chat/completions`;
      const json = await charterProcess(
        [
          "run",
          files.agentPath,
          "Hi.",
          "--config",
          files.configPath,
          "--json",
          "--runs-dir",
          files.runsDirectory,
        ],
        { cwd: files.directory },
      );
      expect(json.exitCode).toBe(1);
      const result = JSON.parse(json.stdout) as AIAgentResult;
      expect(result.outcome).toBe("FAILED_BUDGET_EXHAUSTED");
      expect(result.error).toMatchObject({
        code: "MODEL_UNREACHABLE",
        details: { url, networkCause: `ECONNREFUSED 127.0.0.1:${port}`, targets: ["local/test-model"] },
      });
      expect(result.error?.message).toContain(`${url} (ECONNREFUSED 127.0.0.1:${port})`);
      expect(result.finalReport?.metadata).toMatchObject({ reason: "model_unreachable" });

      const human = await charterProcess(
        ["run", files.agentPath, "Hi.", "--config", files.configPath, "--runs-dir", files.runsDirectory],
        { cwd: files.directory },
      );
      expect(human.exitCode).toBe(1);
      const runId = /charter: run (run_\S+)/.exec(human.stderr)?.[1];
      expect(runId).toBeDefined();
      expect(human.stderr).toContain(
        "charter: FAILED_BUDGET_EXHAUSTED (MODEL_UNREACHABLE): the model was never reached",
      );
      expect(human.stderr).toContain(`(ECONNREFUSED 127.0.0.1:${port})`);
      expect(human.stderr).toContain(`charter:   inspect:  charter runs show ${runId} --conversation`);
      // A failed run is finished: nothing to resume.
      expect(human.stderr).not.toContain("charter resume");
      expect(human.stderr).not.toContain(secret);
    },
    processTimeout,
  );
});

describe("human-mode stop messages", () => {
  it(
    "an interrupted run: the outcome once, the run id, and the commands to continue and inspect it",
    async () => {
      const busy = await busyRunProject(secret);
      server = busy.server;
      const { firstRequest, files } = busy;
      const child = spawn(
        process.execPath,
        [
          charterBinary,
          "run",
          files.agentPath,
          "Wait.",
          "--config",
          files.configPath,
          "--runs-dir",
          files.runsDirectory,
        ],
        { stdio: ["ignore", "pipe", "pipe"], cwd: files.directory },
      );
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
      });
      const exited = new Promise<number | null>((resolveExit) =>
        child.on("close", (code) => resolveExit(code)),
      );
      await firstRequest;
      child.kill("SIGINT");
      expect(await exited).toBe(1);
      expect(stderr).toContain("charter: INTERRUPTED: the run was interrupted\n");
      expect(stderr).not.toContain("INTERRUPTED: INTERRUPTED");
      const runId = /charter: run (run_\S+)\n/.exec(stderr)?.[1];
      expect(runId).toBeDefined();
      expect(stderr).toContain(`charter:   continue: charter resume ${runId}\n`);
      expect(stderr).toContain(`charter:   inspect:  charter runs show ${runId} --conversation\n`);
    },
    processTimeout,
  );

  it(
    "a tool server that exits at start: the tail of its stderr in human mode, and the failed run stored to inspect",
    async () => {
      server = await startScriptedOpenAIServer({ script: [] });
      const config = providerConfig(server.baseUrl);
      (config.mcpServers.test as Record<string, unknown>).env = { CHARTER_TEST_MCP_FAIL_START: "1" };
      const files = await project({
        agent: agentFile("models: [local/test-model]\ntools: [test]"),
        config,
        env: `LOCAL_API_KEY=${secret}\n`,
      });
      const run = await charterProcess(
        ["run", files.agentPath, "x", "--config", files.configPath, "--runs-dir", files.runsDirectory],
        { cwd: files.directory },
      );
      expect(run.exitCode).toBe(3);
      expect(run.stderr).toContain(
        "charter: FAILED_PREFLIGHT (MCP_SERVER_FAILED): MCP server 'test' failed to start",
      );
      expect(run.stderr).toContain("charter: the server's stderr (last 1 line):\n");
      expect(run.stderr).toContain("charter:   | mcp-test-server: failing on purpose before connecting\n");
      // A run that fails before its session starts is stored as a FAILED_PREFLIGHT run: the stop names it and how to
      // inspect it (there is nothing to resume).
      const runId = /charter: run (run_\S+)\n/.exec(run.stderr)?.[1];
      expect(runId, run.stderr).toBeDefined();
      expect(run.stderr).toContain(`charter:   inspect:  charter runs show ${runId} --conversation\n`);
      expect(run.stderr).not.toContain("charter resume");
      const shown = await charterProcess(["runs", "show", runId as string, "--json"], {
        cwd: files.directory,
      });
      expect(shown.exitCode, shown.stderr).toBe(0);
      expect(shown.stdout).toContain("FAILED_PREFLIGHT");
    },
    processTimeout,
  );

  it(
    "a tool that toolsDenied removes but tools: names is reported as denied, not unknown",
    async () => {
      server = await startScriptedOpenAIServer({ script: [] });
      const config = providerConfig(server.baseUrl);
      (config.mcpServers.test as Record<string, unknown>).toolsDenied = ["add"];
      const files = await project({
        agent: agentFile("models: [local/test-model]\ntools: [test__echo, test__add]"),
        config,
        env: `LOCAL_API_KEY=${secret}\n`,
      });
      const run = await charterProcess(
        [
          "run",
          files.agentPath,
          "x",
          "--config",
          files.configPath,
          "--json",
          "--runs-dir",
          files.runsDirectory,
        ],
        { cwd: files.directory },
      );
      expect(run.exitCode).toBe(3);
      const result = JSON.parse(run.stdout) as AIAgentResult;
      expect(result.error).toMatchObject({
        code: "TOOL_REFERENCE_DENIED",
        details: { reference: "test__add", server: "test", toolsDenied: ["add"] },
      });
      // A name the server does not have at all is still unknown.
      const unknown = await project({
        agent: agentFile("models: [local/test-model]\ntools: [test__echo, test__nothing_like_this]"),
        config,
        env: `LOCAL_API_KEY=${secret}\n`,
      });
      const other = await charterProcess(
        [
          "run",
          unknown.agentPath,
          "x",
          "--config",
          unknown.configPath,
          "--json",
          "--runs-dir",
          join(unknown.directory, "runs"),
        ],
        { cwd: unknown.directory },
      );
      expect((JSON.parse(other.stdout) as AIAgentResult).error?.code).toBe("TOOL_REFERENCE_UNKNOWN");
      expect(server.requests).toHaveLength(0);
    },
    processTimeout,
  );
});
