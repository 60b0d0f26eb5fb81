import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { agentFile, charterProcess, project, providerConfig } from "./cli-harness.js";

// Start-up is part of performance: a command loads a dependency only on the path that needs it. A loader hook in
// the child process lists every package it loaded, so these tests see exactly what a command imports (no timing).
const hook = `
import { registerHooks } from "node:module";
const loaded = new Set();
registerHooks({
  load(url, context, next) {
    const match = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(url);
    if (match) loaded.add(match[1]);
    return next(url, context);
  },
});
process.on("exit", () => process.stderr.write("\\nloaded-packages:" + JSON.stringify([...loaded]) + "\\n"));
`;

async function loadedPackages(argv: readonly string[], cwd?: string) {
  const directory = (await project({ agent: agentFile("models: [local/test-model]"), config: {} })).directory;
  const hookPath = join(directory, "list-loaded-packages.mjs");
  await writeFile(hookPath, hook);
  const run = await charterProcess(argv, {
    env: { NODE_OPTIONS: `--import ${hookPath}` },
    ...(cwd !== undefined ? { cwd } : {}),
  });
  const line = run.stderr.split("\n").find((text) => text.startsWith("loaded-packages:"));
  expect(line, run.stderr).toBeDefined();
  return { run, packages: JSON.parse(line!.slice("loaded-packages:".length)) as string[] };
}

const heavy = [
  "kysely",
  "better-sqlite3",
  "pg",
  "zod",
  "ajv",
  "yaml",
  "gpt-tokenizer",
  "@modelcontextprotocol/sdk",
  "@ai-sdk/openai",
  "@ai-sdk/anthropic",
  "@ai-sdk/google",
  "@ai-sdk/openai-compatible",
  "@openrouter/ai-sdk-provider",
  "ollama-ai-provider-v2",
  // The server's own: only `charter serve` (and the server commands) load them.
  "fastify",
  "@fastify/swagger",
  "jose",
];

let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe("start-up: each dependency is loaded only on the path that needs it", () => {
  it("charter --version, -v, --help and help run load none of the heavy packages", async () => {
    for (const argv of [["--version"], ["-v"], ["--help"], ["help", "run"], ["run", "--help"]]) {
      const { run, packages } = await loadedPackages(argv);
      expect(run.exitCode, argv.join(" ")).toBe(0);
      expect(packages.filter((name) => heavy.includes(name))).toEqual([]);
    }
  });

  it("a run against one OpenAI-compatible provider loads that provider's package only, no MCP SDK, no PostgreSQL driver", async () => {
    server = await startScriptedOpenAIServer({ script: [{ kind: "text", text: "done" }] });
    const files = await project({
      agent: agentFile("models: [local/test-model]\ntoolPolicy: optional\nmaxTurns: 1"),
      config: providerConfig(server.baseUrl),
      env: "LOCAL_API_KEY=sk-start-up\n",
    });
    const { run, packages } = await loadedPackages([
      "run",
      files.agentPath,
      "Say done.",
      "--config",
      files.configPath,
      "--runs-dir",
      files.runsDirectory,
      "--store",
      `sqlite:${join(files.directory, "store.db")}`,
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(packages).toContain("@ai-sdk/openai-compatible");
    for (const absent of [
      "@modelcontextprotocol/sdk",
      "pg",
      "@ai-sdk/openai",
      "@ai-sdk/anthropic",
      "@ai-sdk/google",
      "@openrouter/ai-sdk-provider",
      "ollama-ai-provider-v2",
      "fastify",
      "jose",
    ]) {
      expect(packages, absent).not.toContain(absent);
    }
  });
});
