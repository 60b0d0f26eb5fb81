import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SetupCheck } from "../../src/runner/diagnose-agent-setup.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { agentFile, charterProcess, mcpTestServerPath } from "./cli-harness.js";

const goodKey = "sk-doctor-good-0123456789";
const wrongKey = "sk-doctor-wrong-9876543210";

let server: ScriptedOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The scripted server answers a request with the good key, and 401 to any other, as a real endpoint does. */
async function keyCheckingServer(): Promise<ScriptedOpenAIServer> {
  return startScriptedOpenAIServer({
    respond: (request) =>
      request.headers.authorization === `Bearer ${goodKey}`
        ? { kind: "text", text: "ok" }
        : {
            kind: "error",
            status: 401,
            body: { error: { message: "Incorrect API key provided", type: "invalid_request_error" } },
          },
  });
}

async function workspace(baseUrl: string, frontmatter: string) {
  const directory = await mkdtemp(join(tmpdir(), "charter-doctor-"));
  const provider = (url: string, apiKey: string) => ({
    type: "openai-compatible",
    baseUrl: url,
    apiKey,
    models: { m: { contextWindow: 32000 } },
  });
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({
      providers: {
        good: provider(baseUrl, goodKey),
        badkey: provider(baseUrl, wrongKey),
        // Port 9 (discard) on the loopback interface: nothing listens, the connection is refused.
        down: provider("http://127.0.0.1:9/v1", goodKey),
      },
      mcpServers: { test: { type: "stdio", command: process.execPath, args: [mcpTestServerPath] } },
    }),
  );
  await writeFile(join(directory, "agent.md"), agentFile(frontmatter));
  return { directory, agentPath: join(directory, "agent.md") };
}

describe("charter doctor and charter run --dry-run (real processes)", () => {
  it("passes every check of a working setup, with one tiny request to the endpoint, exit 0", async () => {
    server = await keyCheckingServer();
    const { directory, agentPath } = await workspace(server.baseUrl, "models: [good/m]\ntools: [test__echo]");
    const { exitCode, stdout, stderr } = await charterProcess(["doctor", agentPath], { cwd: directory });
    expect(stderr).toBe("");
    expect(stdout).toContain("ok    configuration: read ");
    expect(stdout).toContain("ok    agent: ");
    expect(stdout).toContain("ok    model good/m: openai-compatible at ");
    expect(stdout).toContain("ok    tool server test: started; offers ");
    expect(stdout).toContain("ok    tools: ");
    expect(stdout).toContain("ok    endpoint good/m: answered");
    expect(stdout).toMatch(/all \d+ checks passed\n$/);
    expect(exitCode).toBe(0);
    expect(server.requests.filter((request) => request.completionIndex !== null)).toHaveLength(1);
  }, 90_000);

  it("reports the reachable target, the refused port, the refused key and an unknown tool, each with its fix", async () => {
    server = await keyCheckingServer();
    const { directory, agentPath } = await workspace(
      server.baseUrl,
      "models: [good/m, badkey/m, down/m, missing/m]\ntools: [test__echo, test__nope]",
    );
    const { exitCode, stdout } = await charterProcess(["doctor", agentPath, "--json"], { cwd: directory });
    const report = JSON.parse(stdout) as { ok: boolean; checks: SetupCheck[] };
    expect(report.ok).toBe(false);
    const check = (name: string) => report.checks.find((candidate) => candidate.check === name);
    expect(check("endpoint good/m")).toMatchObject({ ok: true });
    expect(check("endpoint badkey/m")).toMatchObject({ ok: false, code: "MODEL_AUTHENTICATION_FAILED" });
    expect(check("endpoint badkey/m")?.fix).toContain("providers.badkey.apiKey");
    expect(check("endpoint down/m")).toMatchObject({ ok: false, code: "MODEL_NETWORK_ERROR" });
    expect(check("endpoint down/m")?.detail).toContain("127.0.0.1:9");
    expect(check("endpoint down/m")?.fix).toContain("providers.down.baseUrl");
    expect(check("model missing/m")).toMatchObject({ ok: false, code: "CONFIGURATION_INVALID" });
    expect(check("model missing/m")?.fix).toContain("add provider 'missing'");
    expect(check("tools")).toMatchObject({ ok: false, code: "TOOL_REFERENCE_UNKNOWN" });
    expect(check("tools")?.detail).toContain("'test__nope'");
    expect(check("tool server test")).toMatchObject({ ok: true });
    // The first failure decides the exit code: an unknown model target is invalid configuration.
    expect(exitCode).toBe(4);
    // Neither key is ever printed.
    expect(stdout).not.toContain(goodKey);
    expect(stdout).not.toContain(wrongKey);
  }, 90_000);

  it("charter run --dry-run runs the same checks for its agent, sends no prompt, and shows the fix in text", async () => {
    server = await keyCheckingServer();
    const { directory, agentPath } = await workspace(server.baseUrl, "models: [badkey/m]");
    const { exitCode, stdout } = await charterProcess(["run", agentPath, "--dry-run"], { cwd: directory });
    expect(stdout).toContain("FAIL  endpoint badkey/m: MODEL_AUTHENTICATION_FAILED: ");
    expect(stdout).toContain("      fix: the endpoint refused the API key: check providers.badkey.apiKey");
    expect(stdout).toMatch(/1 of \d+ checks failed\n$/);
    expect(exitCode).toBe(1);
    // One request: the tiny one, not a run.
    expect(server.requests.filter((request) => request.completionIndex !== null)).toHaveLength(1);
  }, 90_000);

  it("an invalid configuration key stops the checks there, naming the fix, exit 4", async () => {
    const directory = await mkdtemp(join(tmpdir(), "charter-doctor-"));
    await writeFile(join(directory, ".charter.json"), JSON.stringify({ mcpServer: {} }));
    const { exitCode, stdout } = await charterProcess(["doctor"], { cwd: directory });
    expect(stdout).toContain("FAIL  configuration: CONFIGURATION_INVALID: ");
    expect(stdout).toContain(`fix: in ${join(directory, ".charter.json")}, rename mcpServer to mcpServers`);
    expect(exitCode).toBe(4);
  }, 60_000);

  it("without an agent, checks every configured REST tool's definition and names the one that is wrong", async () => {
    const directory = await mkdtemp(join(tmpdir(), "charter-doctor-"));
    await writeFile(
      join(directory, ".charter.json"),
      JSON.stringify({
        restTools: {
          lookup: {
            method: "GET",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: a REST parameter placeholder naming no parameter.
            url: "http://127.0.0.1:9/x?q=${parameters.nope}",
            parametersSchema: { type: "object", properties: { city: { type: "string" } } },
          },
        },
      }),
    );
    const { exitCode, stdout } = await charterProcess(["doctor", "--json"], { cwd: directory });
    const report = JSON.parse(stdout) as { ok: boolean; checks: SetupCheck[] };
    const rest = report.checks.find((check) => check.check === "REST tools");
    expect(rest).toMatchObject({ ok: false, code: "CONFIGURATION_INVALID" });
    expect(rest?.detail).toContain("restTools.lookup.parametersSchema");
    expect(report.checks.find((check) => check.check === "models")).toMatchObject({ ok: false });
    expect(exitCode).toBe(4);
  }, 60_000);
});
