import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { onTestFinished } from "vitest";
import { createAgentCatalog } from "../../src/agents/create-agent-catalog.js";
import { systemEnvironment } from "../../src/foundation/environment.js";
import type { RunExecutionContext } from "../../src/server/execution/run-execution-context.js";
import type { RunRequest } from "../../src/server/execution/run-request.js";
import type { PgBossRunDispatcher } from "../../src/server/workers/pg-boss-run-dispatcher.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import type { RunStore } from "../../src/store/run-store.js";
import { type RestTestServer, startRestTestServer } from "../../src/testing/rest-test-server.js";
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { agentFile, charterBinary, localModelProvider } from "../cli/cli-harness.js";
import { postgresTestUrl } from "../store/postgres-store-factory.js";

export { postgresTestUrl };

interface WireMessage {
  readonly role: string;
  readonly content?: string | null;
}

export function wireMessages(request: RecordedRequest): WireMessage[] {
  return (request.body as { messages?: WireMessage[] }).messages ?? [];
}

/** The number of tool answers the conversation of a model request holds: which step of a plan it is at. */
export function toolAnswers(request: RecordedRequest): number {
  return wireMessages(request).filter((message) => message.role === "tool").length;
}

export function reportStep(text: string): ScriptedStep {
  return {
    kind: "tool_calls",
    calls: [{ name: "final_report", arguments: { format: "markdown", content: text } }],
  };
}

/**
 * A server workspace: an agent registry (`agents/helper.md`, `agents/reviewer.md`) on the scripted model, and three
 * REST tools on a test server that counts executions: `rest__read` (GET: read-only), `rest__record` (POST: a write)
 * and `rest__remove` (DELETE: a delete).
 */
export interface ServerWorkspace {
  readonly directory: string;
  readonly model: ScriptedOpenAIServer;
  readonly tools: RestTestServer;
  close(): Promise<void>;
}

export async function serverWorkspace(options: {
  readonly respond: (request: RecordedRequest, index: number) => ScriptedStep | Promise<ScriptedStep>;
  /** Answers a tool request (default: JSON echoing the path), possibly after a while. */
  readonly tool?: Parameters<RestTestServer["respondWith"]>[0];
  readonly frontmatter?: string;
}): Promise<ServerWorkspace> {
  const model = await startScriptedOpenAIServer({ respond: options.respond });
  const tools = await startRestTestServer(
    options.tool ?? ((request) => ({ body: { done: request.method, path: request.path } })),
  );
  const directory = await mkdtemp(join(tmpdir(), "charter-server-"));
  await mkdir(join(directory, "agents"));
  const schema = { type: "object", properties: { key: { type: "string" } }, required: ["key"] };
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({
      providers: localModelProvider(model.baseUrl),
      restTools: {
        read: { method: "GET", url: `${tools.url}/items/\${parameters.key}`, parametersSchema: schema },
        record: { method: "POST", url: `${tools.url}/items/\${parameters.key}`, parametersSchema: schema },
        remove: { method: "DELETE", url: `${tools.url}/items/\${parameters.key}`, parametersSchema: schema },
      },
    }),
  );
  const frontmatter = `models: [local/m]\ntools: [rest__read, rest__record, rest__remove]\nmaxTurns: 6\nmaxRetries: 2${options.frontmatter ?? ""}`;
  await writeFile(
    join(directory, "agents", "helper.md"),
    agentFile(
      `id: helper\ndescription: Helps with items.\nkeywords: [items, records]\n${frontmatter}`,
      "You help with items.",
    ),
  );
  await writeFile(
    join(directory, "agents", "reviewer.md"),
    agentFile(
      `id: reviewer\ndescription: Reviews code changes.\nkeywords: [review, code]\nexampleTasks: [review this change]\n${frontmatter}`,
      "You review code.",
    ),
  );
  return {
    directory,
    model,
    tools,
    async close() {
      await model.close();
      await tools.close();
    },
  };
}

/** A store for one test: a SQLite file, or a PostgreSQL schema of its own (dropped by `dispose`). */
export interface TestStore {
  readonly store: RunStore;
  /** The store's location as `--store` takes it. */
  readonly url: string;
  /** For PostgreSQL: the schema, which also names the test's pg-boss schema. */
  readonly schema: string | null;
  dispose(): Promise<void>;
}

export async function sqliteTestStore(directory: string): Promise<TestStore> {
  const path = join(directory, "charter.db");
  const store = await openRunStore({ path, environment: systemEnvironment });
  return { store, url: `sqlite:${path}`, schema: null, dispose: () => store.close() };
}

export async function postgresTestStore(): Promise<TestStore> {
  const schema = `charter_test_${randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const client = new pg.Client({ connectionString: postgresTestUrl });
  await client.connect();
  try {
    await client.query(`create schema ${schema}`);
  } finally {
    await client.end();
  }
  const url = new URL(postgresTestUrl);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const store = await openRunStore({ url: url.toString(), environment: systemEnvironment });
  return {
    store,
    url: url.toString(),
    schema,
    async dispose() {
      await store.close();
      const cleanup = new pg.Client({ connectionString: postgresTestUrl });
      await cleanup.connect();
      try {
        await cleanup.query(`drop schema if exists ${schema} cascade`);
        await cleanup.query(`drop schema if exists ${schema}_queue cascade`);
      } finally {
        await cleanup.end();
      }
    },
  };
}

export function executionContext(
  workspace: ServerWorkspace,
  store: RunStore,
  extra: Partial<RunExecutionContext> = {},
): RunExecutionContext {
  return {
    store,
    agentCatalog: createAgentCatalog(),
    environment: systemEnvironment,
    cwd: workspace.directory,
    homeDirectory: workspace.directory,
    etcDirectory: join(workspace.directory, "etc"),
    runsDirectory: join(workspace.directory, "runs"),
    ...extra,
  };
}

let requestCount = 0;

export function runRequest(overrides: Partial<RunRequest> = {}): RunRequest {
  requestCount += 1;
  return {
    runId: `run_server_${requestCount}_${randomUUID().slice(0, 8)}`,
    requestId: `req_${requestCount}`,
    tenantId: "acme",
    userId: "ann",
    role: "operator",
    correlationId: `corr-${requestCount}`,
    conversationId: null,
    agent: "helper",
    prompt: "Look up the item alpha.",
    input: null,
    metadata: {},
    requestedAt: Date.now(),
    ...overrides,
  };
}

/** A promise and the function that resolves it: a point a test waits for, or a gate it opens. */
export function gate(): { readonly opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/**
 * Resolves once `check` holds, checking it every 25 ms (an observable condition, never a fixed wait); rejects with
 * `what` after `timeoutMs`.
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Releases `resource` when the running test finishes, passed or failed. Vitest runs these callbacks last registered
 * first, so what was made from a resource (a worker over a store, a store in a workspace's folder) is released
 * before it: the order each test file's afterEach used to spell out, without a module-level variable per resource.
 * Call it inside a test.
 */
export function releasedAfterTest<T>(resource: T, release: (resource: T) => Promise<unknown>): T {
  onTestFinished(async () => {
    await release(resource);
  });
  return resource;
}

/** A `serverWorkspace` closed when the running test finishes. */
export async function testWorkspace(
  options: Parameters<typeof serverWorkspace>[0],
): Promise<ServerWorkspace> {
  return releasedAfterTest(await serverWorkspace(options), (workspace) => workspace.close());
}

/** A store of the given kind for the running test (SQLite in `directory`), disposed when the test finishes. */
export async function testStoreOn(
  backend: "sqlite" | "postgres" | string,
  directory: string,
): Promise<TestStore> {
  const testStore = backend === "sqlite" ? await sqliteTestStore(directory) : await postgresTestStore();
  return releasedAfterTest(testStore, (store) => store.dispose());
}

/**
 * The pg-boss dispatcher of a server that executes no runs itself (they go to `charter worker` processes), polling
 * every 100 ms; closed when the running test finishes. Loaded on demand: only the PostgreSQL tests need pg-boss.
 */
export async function pgBossTestDispatcher(
  workspace: ServerWorkspace,
  testStore: TestStore,
): Promise<PgBossRunDispatcher> {
  const { createPgBossRunDispatcher } = await import("../../src/server/workers/pg-boss-run-dispatcher.js");
  const dispatcher = await createPgBossRunDispatcher({
    context: executionContext(workspace, testStore.store),
    url: testStore.url,
    pollMilliseconds: 100,
  });
  return releasedAfterTest(dispatcher, (opened) => opened.close());
}

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  /** What it printed so far, stdout and stderr together. */
  output(): string;
}

/**
 * `charter worker` as a real child process in the workspace (its configuration and agents) over the test's store,
 * with a short lease (3 s) and poll (100 ms) so that a take-over happens within a test; `flags` and `environment`
 * add to its command line and environment. Killed with SIGKILL when the running test finishes, if still running.
 */
export function startWorkerProcess(
  workspace: ServerWorkspace,
  testStore: TestStore,
  options: { readonly flags?: readonly string[]; readonly environment?: NodeJS.ProcessEnv } = {},
): WorkerProcess {
  const child = spawn(
    process.execPath,
    [
      charterBinary,
      "worker",
      "--store",
      testStore.url,
      ...(options.flags ?? []),
      "--lease",
      "3s",
      "--poll",
      "100ms",
    ],
    {
      cwd: workspace.directory,
      env: { ...process.env, HOME: workspace.directory, CHARTER_DATABASE_URL: "", ...options.environment },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString("utf8");
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const worker: WorkerProcess = {
    child,
    exited: new Promise<number | null>((resolveExit) => child.on("exit", (code) => resolveExit(code))),
    output: () => output,
  };
  return releasedAfterTest(worker, async (started) => {
    started.child.kill("SIGKILL");
    await started.exited;
  });
}

/**
 * Two `charter worker` processes (two runs at once each) over the test's store take `request` from `dispatcher`;
 * once `underWay` resolves (the run is at a point the test chose), which of them owns the run and which does not.
 */
export async function runOnTwoWorkers(
  workspace: ServerWorkspace,
  testStore: TestStore,
  dispatcher: PgBossRunDispatcher,
  request: RunRequest,
  underWay: Promise<void>,
): Promise<{ readonly owner: WorkerProcess; readonly other: WorkerProcess }> {
  const twoAtOnce = { flags: ["--concurrency", "2"] };
  const workers = [
    startWorkerProcess(workspace, testStore, twoAtOnce),
    startWorkerProcess(workspace, testStore, twoAtOnce),
  ];
  await dispatcher.dispatch(request);
  await underWay;
  const ownerPid = (await testStore.store.forTenant(request.tenantId).getRun(request.runId))?.owner?.pid;
  const owner = workers.find((worker) => worker.child.pid === ownerPid);
  const other = workers.find((worker) => worker.child.pid !== ownerPid);
  if (owner === undefined || other === undefined) throw new Error(`no worker owns run ${request.runId}`);
  return { owner, other };
}

/**
 * A workspace whose agent writes `one` (`rest__record`), then reports; the write waits at the tool server until the
 * test opens `releaseWrite`, and `writeHeld` opens once it is under way: the moment a test stops or kills the worker
 * that runs it. Closed when the running test finishes.
 */
export async function heldWriteWorkspace(): Promise<{
  readonly workspace: ServerWorkspace;
  readonly writeHeld: ReturnType<typeof gate>;
  readonly releaseWrite: ReturnType<typeof gate>;
}> {
  const writeHeld = gate();
  const releaseWrite = gate();
  const workspace = await testWorkspace({
    respond: (request) =>
      toolAnswers(request) === 0
        ? { kind: "tool_calls", calls: [{ id: "w1", name: "rest__record", arguments: { key: "one" } }] }
        : reportStep("recorded one"),
    tool: async (request) => {
      writeHeld.open();
      await releaseWrite.opened;
      return { body: { recorded: request.path } };
    },
  });
  return { workspace, writeHeld, releaseWrite };
}
