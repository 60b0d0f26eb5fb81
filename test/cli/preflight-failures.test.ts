import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemEnvironment } from "../../src/foundation/environment.js";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { agentFile, charterProcess, project, providerConfig } from "./cli-harness.js";

let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function runWithTools(tools: string) {
  server = await startScriptedOpenAIServer({ script: [{ kind: "text", text: "2 + 3 = 5" }] });
  const files = await project({
    agent: agentFile(`models: [local/test-model]\ntools: [${tools}]`),
    config: providerConfig(server.baseUrl),
    env: "LOCAL_API_KEY=key-for-tool-reference-test\n",
  });
  const run = await charterProcess([
    "run",
    files.agentPath,
    "Add 2 and 3.",
    "--config",
    files.configPath,
    "--json",
    "--runs-dir",
    files.runsDirectory,
  ]);
  return { ...run, result: JSON.parse(run.stdout) as AIAgentResult, requests: server.requests.length };
}

describe("charter run: every entry of an agent's `tools` must exist (preflight)", () => {
  it.each([
    ["a tool its server does not offer", "test__nope"],
    ["a server that is not configured", "nosuchserver"],
  ])(
    "an entry naming %s fails FAILED_PREFLIGHT, exit code 3, before any inference",
    async (_what, reference) => {
      const run = await runWithTools(`test__add, ${reference}`);
      expect(run.exitCode).toBe(3);
      expect(run.result).toMatchObject({
        success: false,
        outcome: "FAILED_PREFLIGHT",
        error: { code: "TOOL_REFERENCE_UNKNOWN", details: { key: "tools", reference } },
      });
      expect(run.requests).toBe(0);
    },
  );

  it("entries naming a server's tool and a server run as before", async () => {
    const run = await runWithTools("test__add, test");
    expect(run.exitCode).toBe(0);
    expect(run.result.outcome).toBe("COMPLETED_CHAT_ONLY");
    expect(run.requests).toBe(1);
  });
});

describe("charter run: a failure before the session starts", () => {
  it("carries the error's details, with the configuration's secrets redacted", async () => {
    const secret = "sk-preflight-0d1ef28225e15206";
    server = await startScriptedOpenAIServer({ script: [] });
    // A stdio server that prints its token to stderr and exits: the start failure quotes the stderr tail.
    const leaky = {
      type: "stdio",
      command: process.execPath,
      args: ["-e", "process.stderr.write('token=' + process.env.TOKEN + '\\n'); process.exit(1)"],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a configuration placeholder that Charter expands.
      env: { TOKEN: "${LEAKY_TOKEN}" },
    };
    const files = await project({
      agent: agentFile("models: [local/test-model]\ntools: [leaky]"),
      config: { ...providerConfig(server.baseUrl), mcpServers: { leaky } },
      env: `LOCAL_API_KEY=key-for-preflight-test\nLEAKY_TOKEN=${secret}\n`,
    });
    const run = await charterProcess([
      "run",
      files.agentPath,
      "Start.",
      "--config",
      files.configPath,
      "--json",
      "--runs-dir",
      files.runsDirectory,
    ]);
    expect(run.exitCode).toBe(3);
    const result = JSON.parse(run.stdout) as AIAgentResult;
    expect(result).toMatchObject({
      outcome: "FAILED_PREFLIGHT",
      error: { code: "MCP_SERVER_FAILED", details: { server: "leaky", phase: "start" } },
    });
    expect(result.error?.details?.stderrTail).toEqual(expect.stringContaining("token="));
    expect(run.stdout).not.toContain(secret);
  });
});

describe("charter run: a run that fails before its session starts is stored", () => {
  it.each([
    ["a tool server that will not start", "broken", "MCP_SERVER_FAILED", "tool_servers"],
    ["a tools entry that names nothing", "test__nope", "TOOL_REFERENCE_UNKNOWN", "tool_availability"],
  ])(
    "%s: FAILED_PREFLIGHT with its PRECHECK entry, in runs list and verify",
    async (_what, tools, code, check) => {
      server = await startScriptedOpenAIServer({ script: [] });
      const broken = { type: "stdio", command: process.execPath, args: ["-e", "process.exit(1)"] };
      const files = await project({
        agent: agentFile(`models: [local/test-model]\ntools: [${tools}]`),
        config: { ...providerConfig(server.baseUrl), mcpServers: { broken } },
        env: "LOCAL_API_KEY=key-for-stored-preflight-test\n",
      });
      const store = join(files.directory, "charter.db");
      const charter = (argv: readonly string[]) => charterProcess([...argv, "--store", store]);
      const run = await charter([
        "run",
        files.agentPath,
        "Start.",
        "--config",
        files.configPath,
        "--json",
        "--runs-dir",
        files.runsDirectory,
      ]);
      expect(run.exitCode).toBe(3);
      const result = JSON.parse(run.stdout) as AIAgentResult;
      expect(result).toMatchObject({ outcome: "FAILED_PREFLIGHT", error: { code } });
      expect(result.contractHash).toEqual(expect.any(String));

      const listed = JSON.parse((await charter(["runs", "list", "--json"])).stdout);
      expect(listed).toEqual([
        expect.objectContaining({
          runId: result.runId,
          status: "failed",
          outcome: "FAILED_PREFLIGHT",
          errorCode: code,
          entries: 2,
        }),
      ]);
      const verified = await charter(["verify", result.runId]);
      expect(verified.exitCode).toBe(0);
      expect(verified.stdout).toContain("verified: 2 entries");

      const opened = await openRunStore({ path: store, environment: systemEnvironment });
      try {
        const entries = [];
        for await (const entry of opened.readEntries(result.runId)) entries.push(entry);
        expect(entries.map((entry) => entry.state)).toEqual(["PRECHECK", "TERMINATE"]);
        expect(entries[0]?.result).toMatchObject({ ok: false, problems: [{ check }] });
        expect(entries[0]?.action).toMatchObject({ run: { tenant_id: null, bound_records: 1 } });
        expect(entries[1]?.result).toMatchObject({ outcome: "FAILED_PREFLIGHT", error: { code } });
      } finally {
        await opened.close();
      }
    },
  );
});
