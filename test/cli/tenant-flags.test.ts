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
    expect(JSON.parse((await charter(["runs", "list", "--json"])).stdout)).toHaveLength(2);

    const opened = await openRunStore({ path: store, environment: systemEnvironment });
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
});
