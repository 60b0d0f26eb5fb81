import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemEnvironment } from "../../src/foundation/environment.js";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { agentFile, charterProcess, cli, project, providerConfig } from "./cli-harness.js";

let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe("charter run --tenant --correlation-id, charter runs list --tenant", () => {
  it("records both ids on the run, its PRECHECK entry and every accounting entry; runs list filters by tenant", async () => {
    server = await startScriptedOpenAIServer({ respond: () => ({ kind: "text", text: "done" }) });
    const files = await project({
      agent: agentFile("models: [local/test-model]"),
      config: providerConfig(server.baseUrl),
      env: "LOCAL_API_KEY=key-for-tenant-flags-test\n",
    });
    const store = join(files.directory, "charter.db");
    const charter = (argv: readonly string[]) => charterProcess([...argv, "--store", store]);
    const runFor = async (tenant: string, correlationId: string) => {
      const run = await charter([
        "run",
        files.agentPath,
        "Go.",
        "--config",
        files.configPath,
        "--json",
        "--runs-dir",
        files.runsDirectory,
        "--tenant",
        tenant,
        "--correlation-id",
        correlationId,
      ]);
      expect(run.exitCode).toBe(0);
      return JSON.parse(run.stdout) as AIAgentResult;
    };
    const acme = await runFor("acme", "req-1");
    await runFor("globex", "req-2");
    expect(acme.accounting.length).toBeGreaterThan(0);
    for (const entry of acme.accounting)
      expect(entry).toMatchObject({ tenantId: "acme", correlationId: "req-1" });

    const listed = JSON.parse((await charter(["runs", "list", "--tenant", "acme", "--json"])).stdout);
    expect(listed).toEqual([
      expect.objectContaining({ runId: acme.runId, tenantId: "acme", correlationId: "req-1" }),
    ]);
    // Without --tenant, the default tenant's runs: neither of these.
    expect(JSON.parse((await charter(["runs", "list", "--json"])).stdout)).toEqual([]);

    const opened = await openRunStore({ path: store, environment: systemEnvironment, tenantId: "acme" });
    try {
      const [precheck] = await (async () => {
        const entries = [];
        for await (const entry of opened.readEntries(acme.runId)) entries.push(entry);
        return entries;
      })();
      expect(precheck).toMatchObject({
        state: "PRECHECK",
        action: { run: { tenant_id: "acme", correlation_id: "req-1", bound_records: 1 } },
      });
      for (const entry of await opened.readAccounting(acme.runId))
        expect(entry).toMatchObject({ tenantId: "acme", correlationId: "req-1" });
    } finally {
      await opened.close();
    }
  });

  it("refuses a correlation id that cannot travel as an HTTP header, with exit code 4", async () => {
    const files = await project({
      agent: agentFile("models: [local/test-model]"),
      config: providerConfig("http://127.0.0.1:9"),
    });
    const run = await cli([
      "run",
      files.agentPath,
      "Go.",
      "--config",
      files.configPath,
      "--store",
      join(files.directory, "charter.db"),
      "--correlation-id",
      "req-1\r\nx-injected: 1",
    ]);
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain("x-correlation-id");
  });

  it("keeps a tenant's run from every other tenant: runs show, verify, replay and resume answer not found", async () => {
    server = await startScriptedOpenAIServer({ respond: () => ({ kind: "text", text: "done" }) });
    const files = await project({
      agent: agentFile("models: [local/test-model]"),
      config: providerConfig(server.baseUrl),
      env: "LOCAL_API_KEY=key-for-tenant-scope-test\n",
    });
    const at = ["--store", join(files.directory, "charter.db"), "--runs-dir", files.runsDirectory];
    const run = await cli([
      "run",
      files.agentPath,
      "Go.",
      "--config",
      files.configPath,
      "--json",
      ...at,
      "--tenant",
      "acme",
    ]);
    expect(run.exitCode).toBe(0);
    const { runId } = JSON.parse(run.stdout) as AIAgentResult;
    const storeOnly = at.slice(0, 2);

    for (const stranger of [["--tenant", "globex"], []]) {
      const commands = [
        ["runs", "show", runId, ...storeOnly],
        ["runs", "show", runId, "--conversation", ...storeOnly],
        // The runs directory holds the run too: it is not another way in.
        ["verify", runId, ...at],
        ["replay", runId, ...at],
        ["resume", runId, ...storeOnly],
      ];
      for (const command of commands) {
        const answer = await cli([...command, ...stranger]);
        expect(answer.exitCode, command.join(" ")).toBe(1);
        expect(answer.stderr, command.join(" ")).toContain("RUN_NOT_FOUND");
        expect(answer.stdout).toBe("");
      }
    }
    const own = ["--tenant", "acme"];
    expect(
      JSON.parse((await cli(["runs", "show", runId, "--json", ...storeOnly, ...own])).stdout),
    ).toMatchObject({
      runId,
      tenantId: "acme",
    });
    expect((await cli(["verify", runId, ...at, ...own])).stdout).toContain("verified");
    expect((await cli(["replay", runId, ...at, ...own])).stdout).toContain("matches the record");
    // Found, and refused for what it is: a completed run does not resume.
    expect((await cli(["resume", runId, ...storeOnly, ...own])).stderr).toContain("RUN_NOT_RESUMABLE");
  });
});
