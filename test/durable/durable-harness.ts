import { type ChildProcess, spawn } from "node:child_process";
import { watch } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { expect } from "vitest";
import { systemEnvironment } from "../../src/foundation/environment.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { charterBinary, cli, recordingWorkspace } from "../cli/cli-harness.js";

/**
 * Durable runs for real: `charter run` (or `charter resume`) as a child process against the scripted model and
 * the real MCP test server, which records every tool execution. One server and one child at a time; the test
 * file calls `closeDurableHarness` after each test.
 */
let server: ScriptedOpenAIServer | null = null;
let child: ChildProcess | null = null;

export async function closeDurableHarness(): Promise<void> {
  child?.kill("SIGKILL");
  child = null;
  await server?.close();
  server = null;
}

interface WireMessage {
  role: string;
  content?: string;
}

/** The scripted model: a fixed plan, chosen from how many tool results the conversation holds. */
function plan(steps: readonly ScriptedStep[]) {
  return (request: RecordedRequest): ScriptedStep => {
    const messages = (request.body as { messages: WireMessage[] }).messages;
    const done = messages.filter((message) => message.role === "tool").length;
    return steps[Math.min(done, steps.length - 1)]!;
  };
}

/**
 * A workspace whose agent uses the MCP test server `test`, against a scripted model following `steps`;
 * `onRequest` sees each model request's index (counted across every process of the run) before it is answered,
 * and holds the answer back until the promise it returns (if any) settles.
 */
export async function durableWorkspace(
  steps: readonly ScriptedStep[],
  options: { onRequest?: (index: number) => unknown; frontmatter?: string } = {},
) {
  const respond = plan(steps);
  server = await startScriptedOpenAIServer({
    respond: async (request, index) => {
      await options.onRequest?.(index);
      return respond(request);
    },
  });
  const { directory, recordFile } = await recordingWorkspace({
    prefix: "charter-durable-",
    baseUrl: server.baseUrl,
    frontmatter: `models: [local/m]\ntools: [test]\nmaxTurns: 8\ntoolTimeout: 2m${options.frontmatter ?? ""}`,
    body: "Do the task with tools.",
  });
  return { directory, recordFile, store: join(directory, "charter.db") };
}

/** `charter run` of the workspace's agent with its store and runs directory, the result as JSON on stdout. */
export function runArguments(directory: string, store: string, task = "Go."): string[] {
  return [
    "run",
    join(directory, "agent.md"),
    task,
    "--json",
    "--store",
    store,
    "--runs-dir",
    join(directory, "runs"),
  ];
}

/** Starts `charter <argv>` as a child process (the one this harness kills). */
export function startCharter(argv: readonly string[], cwd: string): { exited: Promise<number | null> } {
  const started = spawn(process.execPath, [charterBinary, ...argv], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child = started;
  started.stdout?.resume();
  started.stderr?.resume();
  return { exited: new Promise((resolveExit) => started.on("exit", (code) => resolveExit(code))) };
}

/** kill -9 of the running child, resolved once it is gone. */
export async function killChild(run: { exited: Promise<number | null> }): Promise<void> {
  child?.kill("SIGKILL");
  await run.exited;
  child = null;
}

/** A promise and the function that resolves it: a kill point the scripted model reaches. */
export function signal(): { reached: Promise<void>; reach: () => void } {
  let reach = () => {};
  const reached = new Promise<void>((resolveReached) => {
    reach = resolveReached;
  });
  return { reached, reach };
}

/**
 * Resolves once `test` holds for the file's text: checked at once and on every change (no polling, no sleep).
 * The file's directory is watched, not the file, because the file may not exist yet (the run directory's
 * transcript is created with its first entry); a directory watch also reports changes to the files in it.
 */
export function fileSatisfies(path: string, test: (text: string) => boolean): Promise<void> {
  return new Promise((resolveSatisfied, reject) => {
    let done = false;
    const watcher = watch(dirname(path), () => void check());
    async function check(): Promise<void> {
      const text = await readFile(path, "utf8").catch(() => "");
      if (done || !test(text)) return;
      done = true;
      watcher.close();
      resolveSatisfied();
    }
    watcher.on("error", reject);
    void check();
  });
}

export async function onlyRunId(store: string): Promise<string> {
  const listed = await cli(["runs", "list", "--json", "--store", store]);
  const runs = JSON.parse(listed.stdout) as { runId: string; status: string; resumeCommand: string | null }[];
  expect(runs).toHaveLength(1);
  // The process died: nobody marked the run finished, and its process is gone, so it shows as abandoned.
  expect(runs[0]).toMatchObject({ status: "abandoned", resumeCommand: `charter resume ${runs[0]!.runId}` });
  return runs[0]!.runId;
}

// The record file of the MCP test server, kept with the workspace it belongs to.
export { records } from "../cli/cli-harness.js";

/** The hashes of the run's stored chain, in order. */
export async function storedChain(store: string, runId: string): Promise<string[]> {
  const opened = await openRunStore({ path: store, environment: systemEnvironment });
  try {
    const hashes: string[] = [];
    for await (const entry of opened.readEntries(runId)) hashes.push(entry.hash);
    return hashes;
  } finally {
    await opened.close();
  }
}

/**
 * What every resumed run must show: its chain verifies and replays offline to the same outcome, and it continues
 * the chain stored before the kill (`committed`) unchanged: no committed step lost.
 */
export async function expectIntactRun(store: string, runId: string, committed: readonly string[]) {
  const verified = JSON.parse((await cli(["verify", runId, "--json", "--store", store])).stdout);
  expect(verified).toMatchObject({ ok: true });
  const replayed = JSON.parse((await cli(["replay", runId, "--json", "--store", store])).stdout);
  expect(replayed).toMatchObject({ ok: true });
  const chain = await storedChain(store, runId);
  expect(chain.slice(0, committed.length)).toEqual(committed);
  expect(chain.length).toBeGreaterThan(committed.length);
  return { replayed };
}

/**
 * Takes the SQLite store's write lock from this process, as another writer would: the run's next transaction
 * (its checkpoint) waits for it, so a run can be stopped between a tool's end and that checkpoint. Returns the
 * release.
 */
export function holdStoreWriteLock(store: string): () => void {
  const database = new Database(store);
  database.pragma("busy_timeout = 10000");
  database.exec("BEGIN IMMEDIATE");
  return () => {
    database.exec("ROLLBACK");
    database.close();
  };
}

/** The one run directory's transcript.jsonl under `runs` (a run started by `charter run --runs-dir runs`). */
export function runDirectoryTranscript(runs: string): Promise<string> {
  // The run writes its directory asynchronously: it may not be there yet when a tool of the run has started.
  return new Promise((resolveFound, reject) => {
    let done = false;
    const watcher = watch(dirname(runs), { recursive: true }, () => void check());
    async function check(): Promise<void> {
      const names = await readdir(runs).catch(() => [] as string[]);
      if (done || names.length === 0) return;
      done = true;
      watcher.close();
      try {
        expect(names).toHaveLength(1);
        resolveFound(join(runs, names[0] as string, "transcript.jsonl"));
      } catch (error) {
        reject(error);
      }
    }
    watcher.on("error", reject);
    void check();
  });
}

/**
 * Resolves once the SQLite store at `store` holds an entry of this state and turn (of any run): checked at once
 * and on every change in the store's directory (no polling, no sleep). For a call that may run again, the run
 * records its turn while the call waits rather than before it starts, so a test that must kill the run after
 * that record waits for it here rather than for the call's side effect.
 */
export function storeHoldsEntry(store: string, state: string, turn: number): Promise<void> {
  return new Promise((resolveHeld, reject) => {
    let done = false;
    const watcher = watch(dirname(store), () => check());
    function held(): boolean {
      let database: Database.Database;
      try {
        database = new Database(store, { readonly: true, fileMustExist: true });
      } catch {
        return false; // not created yet
      }
      try {
        const rows = database.prepare("select entries from charter_run_segments").all() as {
          entries: string;
        }[];
        return rows.some(({ entries }) => holdsEntry(`${entries}\n`, state, turn));
      } catch {
        return false; // not migrated yet
      } finally {
        database.close();
      }
    }
    function check(): void {
      if (done || !held()) return;
      done = true;
      watcher.close();
      resolveHeld();
    }
    watcher.on("error", reject);
    check();
  });
}

/** Whether a JSONL transcript's complete lines hold an entry of this state and turn. */
export function holdsEntry(text: string, state: string, turn: number): boolean {
  return text
    .split("\n")
    .slice(0, -1)
    .some((line) => {
      const entry = JSON.parse(line) as { state?: string; turn?: number };
      return entry.state === state && entry.turn === turn;
    });
}
