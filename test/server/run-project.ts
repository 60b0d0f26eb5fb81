import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgentCatalog } from "../../src/agents/create-agent-catalog.js";
import { loadConfiguration } from "../../src/config/load-configuration.js";
import { systemEnvironment } from "../../src/foundation/environment.js";
import {
  createInProcessRunDispatcher,
  type InProcessRunDispatcher,
} from "../../src/server/execution/in-process-run-dispatcher.js";
import type { RunExecutionContext } from "../../src/server/execution/run-execution-context.js";
import type { RunDecisionRequest, RunRequest } from "../../src/server/execution/run-request.js";
import {
  createProviderKeySourceResolver,
  createTenantConfigurationResolver,
} from "../../src/server/tenants/resolve-tenant-settings.js";
import { createPgBossRunDispatcher } from "../../src/server/workers/pg-boss-run-dispatcher.js";
import {
  type ScriptedOpenAIServer,
  type ScriptedResponder,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { localModelProvider, mcpTestServerPath } from "../cli/cli-harness.js";
import { startTestServer, type TestBackend, type TestServer, testSecretsKey } from "./server-harness.js";

/** The server's in-process dispatcher, with every request it was handed kept for the test to read. */
export interface ObservedDispatcher extends InProcessRunDispatcher {
  readonly dispatched: RunRequest[];
  readonly decided: RunDecisionRequest[];
}

function observed(dispatcher: InProcessRunDispatcher): ObservedDispatcher {
  const dispatched: RunRequest[] = [];
  const decided: RunDecisionRequest[] = [];
  return {
    ...dispatcher,
    dispatched,
    decided,
    dispatch(request) {
      dispatched.push(request);
      return dispatcher.dispatch(request);
    },
    decide(request) {
      decided.push(request);
      return dispatcher.decide(request);
    },
  };
}

/** A server whose runs execute for real: agents in a project folder, the scripted model, the MCP test server. */
export interface RunningServer extends TestServer {
  readonly model: ScriptedOpenAIServer;
  readonly dispatcher: ObservedDispatcher;
  /** What the dispatcher executes runs with: another dispatcher over it continues the same store's runs. */
  readonly context: RunExecutionContext;
  readonly directory: string;
  /** The MCP test server's `record` tool appends here: what a side-effecting tool did. */
  readonly recordFile: string;
}

/**
 * A project with two registry agents (`helper`: chat, tools optional; `recorder`: the MCP test server's tools, its
 * `record` tool destructive, so that it waits for a person's approval), the scripted model server answering with
 * `respond`, and the server over a fresh store of `backend`, its runs executed by the in-process dispatcher (two
 * workers, the tenant configuration resolved from the store).
 */
export async function startRunningServer(
  backend: TestBackend,
  respond: ScriptedResponder,
  options: Parameters<typeof startTestServer>[1] = {},
  /**
   * Execution settings beyond the project's: the workflows folder and repositories of workflow and work item runs;
   * `queue: "pg-boss"` (a PostgreSQL backend) queues runs and decisions through pg-boss to this process's workers.
   */
  execution: Pick<RunExecutionContext, "workflowsDirectory" | "repositories" | "budgets"> & {
    readonly queue?: "pg-boss";
  } = {},
): Promise<RunningServer> {
  const { queue, ...settings } = execution;
  const model = await startScriptedOpenAIServer({ respond });
  const directory = await mkdtemp(join(tmpdir(), "charter-server-runs-"));
  const recordFile = join(directory, "records.jsonl");
  await writeFile(recordFile, "");
  await mkdir(join(directory, "agents"));
  await writeFile(
    join(directory, "agents", "helper.md"),
    "---\ndescription: Answers questions\nmodels: [local/m]\ntoolPolicy: optional\nmaxTurns: 3\n---\nYou answer briefly.\n",
  );
  await writeFile(
    join(directory, "agents", "recorder.md"),
    "---\ndescription: Records things\nmodels: [local/m]\ntools: [test]\ntoolPolicy: optional\nmaxTurns: 4\ndestructiveTools: [test__record]\n---\nYou record what you are told.\n",
  );
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({
      providers: localModelProvider(model.baseUrl),
      mcpServers: {
        test: {
          type: "stdio",
          command: process.execPath,
          args: [mcpTestServerPath],
          env: { CHARTER_TEST_RECORD_FILE: recordFile },
        },
      },
    }),
  );
  const configuration = (await loadConfiguration({ cwd: directory, homeDirectory: directory })).configuration;
  let dispatcher: ObservedDispatcher | null = null;
  let executionContext: RunExecutionContext | null = null;
  const server = await startTestServer(backend, {
    ...options,
    dispatcher: ({ store, url }) => {
      executionContext = {
        store,
        storeUrl: url,
        ...settings,
        agentCatalog: createAgentCatalog(),
        environment: systemEnvironment,
        cwd: directory,
        homeDirectory: directory,
        etcDirectory: join(directory, "etc"),
        runsDirectory: join(directory, "runs"),
        tenantConfiguration: createTenantConfigurationResolver({
          store,
          configuration,
          processEnvironment: {},
          secretsKey: testSecretsKey,
        }),
        providerKeySources: createProviderKeySourceResolver({
          store,
          configuration,
          processEnvironment: {},
          secretsKey: testSecretsKey,
        }),
      };
      dispatcher = observed(
        queue === "pg-boss"
          ? pgBossDispatcher(executionContext, url)
          : createInProcessRunDispatcher({ context: executionContext, workers: 2 }),
      );
      return dispatcher;
    },
  });
  if (dispatcher === null) throw new Error("no dispatcher");
  const made: ObservedDispatcher = dispatcher;
  const context: RunExecutionContext = executionContext as unknown as RunExecutionContext;
  await made.start();
  return {
    ...server,
    model,
    dispatcher: made,
    context,
    directory,
    recordFile,
    async close() {
      await made.drain();
      await server.close();
      await model.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * The pg-boss dispatcher with two workers in this process, shaped as the in-process one (the server is built with
 * its dispatcher before the queue's connections open: each call waits for them; `start` opens them, `drain` closes).
 */
function pgBossDispatcher(context: RunExecutionContext, url: string): InProcessRunDispatcher {
  const opened = createPgBossRunDispatcher({ context, url, workers: 2, pollMilliseconds: 100 });
  return {
    start: async () => void (await opened),
    idle: async () => undefined,
    dispatch: async (request) => (await opened).dispatch(request),
    decide: async (decision) => (await opened).decide(decision),
    cancel: async (tenantId, runId) => (await opened).cancel(tenantId, runId),
    whenSettled: async (tenantId, runId, signal) => (await opened).whenSettled(tenantId, runId, signal),
    drain: async () => (await opened).close(),
  };
}
