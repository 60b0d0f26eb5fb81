import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { demoAnalyst } from "../../src/demo/demo-analyst.js";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { charterProcess } from "./cli-harness.js";

const tutorialPath = resolve(import.meta.dirname, "../../docs/tutorial.md");
const demoServerPath = resolve(import.meta.dirname, "../../dist/demo/demo-mcp-server.js");

/** The fenced block that follows `<!-- tutorial: NAME -->` in docs/tutorial.md. */
function block(tutorial: string, name: string): string {
  const marker = `<!-- tutorial: ${name} -->`;
  const start = tutorial.indexOf(marker);
  if (start === -1) throw new Error(`docs/tutorial.md has no ${marker}`);
  const fenceStart = tutorial.indexOf("\n", tutorial.indexOf("```", start)) + 1;
  return tutorial.slice(fenceStart, tutorial.indexOf("\n```", fenceStart) + 1);
}

let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe("docs/tutorial.md", () => {
  it("its configuration, agent and run command work as written, with a model server in place of Ollama", async () => {
    const tutorial = await readFile(tutorialPath, "utf8");
    // The demo's scripted analyst stands in for the local model: it searches, looks up stock, then reports.
    server = await startScriptedOpenAIServer({ respond: (request) => demoAnalyst(request) });
    const configuration = JSON.parse(block(tutorial, "configuration")) as {
      providers: { ollama: { baseUrl: string } };
      mcpServers: { catalog: { args: string[] } };
    };
    expect(configuration.mcpServers.catalog.args).toEqual(["/path/to/charter/dist/demo/demo-mcp-server.js"]);
    configuration.providers.ollama.baseUrl = server.baseUrl;
    configuration.mcpServers.catalog.args = [demoServerPath];

    const directory = await mkdtemp(join(tmpdir(), "charter-tutorial-"));
    await writeFile(join(directory, ".charter.json"), JSON.stringify(configuration));
    await writeFile(join(directory, "shop.md"), block(tutorial, "agent"));
    const command = block(tutorial, "run").trim();
    const match = /^charter run (\S+) "([^"]+)"$/.exec(command);
    expect(match, command).not.toBeNull();
    const [, agentFile = "", prompt = ""] = match ?? [];

    const run = await charterProcess(["run", agentFile, prompt, "--json"], {
      cwd: directory,
      env: { HOME: directory },
    });
    expect(run.exitCode).toBe(0);
    const result = JSON.parse(run.stdout) as AIAgentResult;
    expect(result).toMatchObject({ success: true, outcome: "COMPLETED_WITH_TOOLS" });
    expect(result.finalReport?.content).toContain("Mechanical keyboard");
    expect(result.accounting.filter((entry) => entry.type === "tool").length).toBeGreaterThan(0);
    expect(server.requests[0]?.bodyText).toContain('"qwen3:8b"');

    // Step 6: the run is listed and verifies.
    const charter = (argv: readonly string[]) =>
      charterProcess(argv, { cwd: directory, env: { HOME: directory } });
    const listed = JSON.parse((await charter(["runs", "list", "--json"])).stdout) as { runId: string }[];
    expect(listed.map((stored) => stored.runId)).toContain(result.runId);
    const verified = JSON.parse((await charter(["verify", result.runId, "--json"])).stdout);
    expect(verified).toMatchObject({ ok: true });
    // Three charter processes and an MCP server: slow on a loaded machine.
  }, 120_000);
});
