import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PassThrough, Writable } from "node:stream";
import type { CliStreams } from "../../src/cli/cli-streams.js";
import { runCli } from "../../src/cli/run-cli.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { nodeProcess } from "../node-process.js";

export const mcpTestServerPath = resolve(import.meta.dirname, "../../src/testing/mcp-test-server.ts");

class Capture extends Writable {
  text = "";
  isTTY = false;
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.text += chunk.toString("utf8");
    callback();
  }
}

/** Runs the CLI in process with captured streams, as `charter <argv>` would run from a shell. */
export async function cli(argv: readonly string[], options: { stdin?: string; signal?: AbortSignal } = {}) {
  const stdout = new Capture();
  const stderr = new Capture();
  const stdin = new PassThrough();
  stdin.end(options.stdin ?? "");
  const streams: CliStreams = {
    stdout,
    stderr,
    stdin,
    signal: options.signal ?? new AbortController().signal,
  };
  const exitCode = await runCli(argv, streams);
  return { exitCode, stdout: stdout.text, stderr: stderr.text };
}

/** The built CLI (`npm run build` first): what tests start as a child process. */
export const charterBinary = resolve(import.meta.dirname, "../../dist/cli/main.js");

/**
 * Runs `charter <argv>` as a real child process and resolves once it exits, with its exit code and whole output.
 * `script` runs another path to the CLI instead (a symlink to it, as a shell runs `charter` from a bin directory);
 * `cwd` and `env` (added to this process's environment) default to this process's.
 */
export function charterProcess(
  argv: readonly string[],
  options: {
    readonly cwd?: string;
    readonly env?: Readonly<Record<string, string | undefined>>;
    readonly script?: string;
  } = {},
): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  return nodeProcess([options.script ?? charterBinary, ...argv], options);
}

/** A temporary project: an agent file, a `.charter.json` (and optional `.charter.env`), and a runs directory. */
export async function project(files: { agent: string; config: unknown; env?: string }) {
  const directory = await mkdtemp(join(tmpdir(), "charter-cli-"));
  const agentPath = join(directory, "agent.md");
  const configPath = join(directory, "charter.json");
  await writeFile(agentPath, files.agent);
  await writeFile(configPath, JSON.stringify(files.config));
  if (files.env !== undefined) await writeFile(join(directory, ".charter.env"), files.env);
  return { directory, agentPath, configPath, runsDirectory: join(directory, "runs") };
}

export function agentFile(frontmatter: string, body = "You are a careful agent."): string {
  return `---\n${frontmatter}\n---\n${body}\n`;
}

export function providerConfig(baseUrl: string, extra: Record<string, unknown> = {}) {
  return {
    providers: {
      local: {
        type: "openai-compatible",
        baseUrl,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a configuration placeholder that Charter expands.
        apiKey: "${LOCAL_API_KEY}",
        models: { "test-model": { contextWindow: 32000 } },
      },
    },
    mcpServers: {
      test: { type: "stdio", command: process.execPath, args: [mcpTestServerPath] },
    },
    ...extra,
  };
}

/** Configuration's `providers`: the scripted server as provider `local`, with one model `m` (32,000 tokens). */
export function localModelProvider(baseUrl: string) {
  return { local: { type: "openai-compatible", baseUrl, models: { m: { contextWindow: 32000 } } } };
}

/**
 * A directory with `agent.md` and a `.charter.json` found from it: the scripted server as provider `local` (model
 * `m`) and the MCP test server as `test`, which records every tool execution in `records.jsonl`.
 */
export async function recordingWorkspace(options: {
  readonly prefix: string;
  readonly baseUrl: string;
  readonly frontmatter: string;
  readonly body: string;
  readonly configuration?: Record<string, unknown>;
}): Promise<{ directory: string; recordFile: string }> {
  const directory = await mkdtemp(join(tmpdir(), options.prefix));
  const recordFile = join(directory, "records.jsonl");
  await writeFile(recordFile, "");
  await writeFile(join(directory, "agent.md"), agentFile(options.frontmatter, options.body));
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({
      providers: localModelProvider(options.baseUrl),
      mcpServers: {
        test: {
          type: "stdio",
          command: process.execPath,
          args: [mcpTestServerPath],
          env: { CHARTER_TEST_RECORD_FILE: recordFile },
        },
      },
      ...options.configuration,
    }),
  );
  return { directory, recordFile };
}

/** The executions the MCP test server's `record` tools appended to the workspace's record file, in order. */
export async function records(file: string): Promise<{ tool: string; key: string }[]> {
  return (await readFile(file, "utf8"))
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));
}

/**
 * A run that stays busy until it is stopped: every model answer calls the test server's `slow` tool for two minutes
 * (the agent's tool timeout is longer). `firstRequest` resolves once the model was first asked, so a test that
 * interrupts or kills the run knows it is under way without sleeping.
 */
export async function busyRunProject(apiKey: string): Promise<{
  server: ScriptedOpenAIServer;
  firstRequest: Promise<void>;
  files: Awaited<ReturnType<typeof project>>;
}> {
  let requested: () => void = () => {};
  const firstRequest = new Promise<void>((resolveRequest) => {
    requested = resolveRequest;
  });
  const server = await startScriptedOpenAIServer({
    respond: () => {
      requested();
      return { kind: "tool_calls", calls: [{ name: "test__slow", arguments: { ms: 120_000 } }] };
    },
  });
  const files = await project({
    agent: agentFile("models: [local/test-model]\ntools: [test]\ntoolTimeout: 10m"),
    config: providerConfig(server.baseUrl),
    env: `LOCAL_API_KEY=${apiKey}\n`,
  });
  return { server, firstRequest, files };
}
