import { type ChildProcess, spawn } from "node:child_process";
import { watch } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { charterBinary, localModelProvider, mcpTestServerPath } from "../cli/cli-harness.js";

interface WireMessage {
  readonly role: string;
  readonly content?: string;
}

/** The agent a model request comes from: every agent of a workspace says who it is in its system prompt. */
export function agentOf(request: RecordedRequest): string {
  const messages = (request.body as { messages?: WireMessage[] }).messages ?? [];
  const system = messages.find((message) => message.role === "system")?.content ?? "";
  return /You are agent ([\w-]+)\./.exec(system)?.[1] ?? "unknown";
}

/** The task (user message) of a model request. */
export function taskOf(request: RecordedRequest): string {
  const messages = (request.body as { messages?: WireMessage[] }).messages ?? [];
  return messages.find((message) => message.role === "user")?.content ?? "";
}

/** How many tool results the conversation of a request holds (its turn, for an agent that calls one tool a turn). */
export function toolResultsOf(request: RecordedRequest): number {
  const messages = (request.body as { messages?: WireMessage[] }).messages ?? [];
  return messages.filter((message) => message.role === "tool").length;
}

export type AgentResponder = (
  request: RecordedRequest,
  agent: string,
) => ScriptedStep | Promise<ScriptedStep>;

export interface WorkflowWorkspace {
  readonly directory: string;
  readonly store: string;
  readonly recordFile: string;
  readonly workflowPath: string;
  readonly server: ScriptedOpenAIServer;
  /** The model requests each agent made so far, in arrival order. */
  requestsOf(agent: string): RecordedRequest[];
}

const servers: ScriptedOpenAIServer[] = [];

export async function closeWorkflowServers(): Promise<void> {
  await Promise.all(servers.splice(0).map((server) => server.close()));
}

/** A text answer: the run completes (chat only) with this report. */
export function answer(text: string): ScriptedStep {
  return { kind: "text", text };
}

/**
 * A folder with agent files (`<name>.md`, each saying "You are agent <name>." so the scripted model knows who asks),
 * a `.charter.json` (the scripted model as `local/m`, the MCP test server as `test`, which records each `record`
 * call in records.jsonl) and the workflow file; the store is `charter.db` in the folder.
 */
export async function workflowWorkspace(options: {
  readonly agents: Readonly<Record<string, string>>;
  readonly workflow: string;
  readonly respond: AgentResponder;
  readonly fileName?: string;
  readonly configuration?: Record<string, unknown>;
}): Promise<WorkflowWorkspace> {
  const server = await startScriptedOpenAIServer({
    respond: (request) => options.respond(request, agentOf(request)),
  });
  servers.push(server);
  const directory = await mkdtemp(join(tmpdir(), "charter-workflow-"));
  const recordFile = join(directory, "records.jsonl");
  await writeFile(recordFile, "");
  for (const [name, frontmatter] of Object.entries(options.agents)) {
    await writeFile(
      join(directory, `${name}.md`),
      `---\nmodels: [local/m]\n${frontmatter}\n---\nYou are agent ${name}. Do the task.\n`,
    );
  }
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({
      providers: localModelProvider(server.baseUrl),
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
  const workflowPath = join(directory, options.fileName ?? "test.workflow.yaml");
  await writeFile(workflowPath, options.workflow);
  return {
    directory,
    store: join(directory, "charter.db"),
    recordFile,
    workflowPath,
    server,
    requestsOf: (agent) =>
      server.requests.filter((request) => request.wire !== null && agentOf(request) === agent),
  };
}

/** The workflow entries (state and step id) stored so far in a SQLite store, read from its segments as stored. */
export function storedWorkflowEntries(store: string): { state: string; step_id: string; seq: number }[] {
  let database: Database.Database;
  try {
    database = new Database(store, { readonly: true, fileMustExist: true });
  } catch {
    return []; // not created yet
  }
  try {
    return readWorkflowEntries(database);
  } finally {
    database.close();
  }
}

function readWorkflowEntries(database: Database.Database): { state: string; step_id: string; seq: number }[] {
  try {
    const rows = database
      .prepare("select entries from charter_run_segments order by run_id, position")
      .all() as {
      entries: string;
    }[];
    return rows.flatMap(({ entries }) =>
      entries
        .split("\n")
        .filter((line) => line.includes('"state":"WORKFLOW_'))
        .map((line) => JSON.parse(line) as { state: string; step_id: string; seq: number }),
    );
  } catch {
    return []; // not migrated yet
  }
}

/**
 * Resolves once the SQLite store holds a workflow entry with this step id (`step/a/end`): checked at once and on
 * every change in the store's directory, never by sleeping. One connection is kept open while waiting: opening and
 * closing one per check would itself change the write-ahead log's file and wake the watch again, forever.
 */
export function storeHoldsStep(store: string, stepId: string): Promise<void> {
  return new Promise((resolveHeld, reject) => {
    let done = false;
    let database: Database.Database | null = null;
    const watcher = watch(dirname(store), () => check());
    function check(): void {
      if (done) return;
      try {
        database ??= new Database(store, { readonly: true, fileMustExist: true });
      } catch {
        return; // not created yet
      }
      if (!readWorkflowEntries(database).some((entry) => entry.step_id === stepId)) return;
      done = true;
      watcher.close();
      database.close();
      resolveHeld();
    }
    watcher.on("error", reject);
    check();
  });
}

/** Resolves once `test` holds for the file's text (checked at once and on every change in its directory). */
export function fileHolds(path: string, test: (text: string) => boolean): Promise<void> {
  return new Promise((resolveHeld, reject) => {
    let done = false;
    const watcher = watch(dirname(path), () => void check());
    async function check(): Promise<void> {
      const text = await readFile(path, "utf8").catch(() => "");
      if (done || !test(text)) return;
      done = true;
      watcher.close();
      resolveHeld();
    }
    watcher.on("error", reject);
    void check();
  });
}

/** The keys the MCP test server recorded, in order. */
export async function recordedKeys(recordFile: string): Promise<string[]> {
  return (await readFile(recordFile, "utf8"))
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => (JSON.parse(line) as { key: string }).key);
}

/** A promise and the function that resolves it. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolveOpened) => {
    open = resolveOpened;
  });
  return { opened, open };
}

/** `charter workflow run` (or any command) as a child process, that a test can kill -9. */
export function startCharterProcess(
  argv: readonly string[],
  cwd: string,
): {
  readonly exited: Promise<number | null>;
  kill(): Promise<void>;
  interrupt(): void;
  readonly stdout: () => string;
  readonly output: () => string;
} {
  const child = spawn(process.execPath, [charterBinary, ...argv], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
    stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  const exited = new Promise<number | null>((resolveExit) => child.on("exit", (code) => resolveExit(code)));
  children.push(child);
  return {
    exited,
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
    interrupt() {
      child.kill("SIGINT");
    },
    stdout: () => stdout,
    output: () => output,
  };
}

const children: ChildProcess[] = [];

/** Kills every child process a test left running (after a failed assertion, say). */
export function killCharterProcesses(): void {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
}
