// Charter adapter for the peers' orchestration-overhead harness (/work/shared/bench-peers).
// Found through BENCH_EXTRA_ADAPTERS=/work/main/bench/peers; imports Charter's built JS from ../../dist
// (run `npm run build` in the Charter repository first).
//
// Charter's real runtime path, nothing switched off: one agent is prepared once (contract built,
// validated and hashed; tool schemas compiled), and every session is one `agent.run()` with a fresh
// contract instance, the session state machine, the protocol adapter, tool-input validation and the
// default tool pipeline, token accounting, and a BLAKE3 hash-chained transcript (redaction, canonical JSON,
// BLAKE3 over every state transition; see create() below for where entries go in each variant).
//
// - inproc: a hand-written object implementing Charter's `ModelClient` interface calls the harness's
//   scriptedModelCall(); the turn is worked out from the history Charter hands it (tool calls already
//   in the assistant messages + 1), as the harness requires.
// - http: Charter's own OpenAI-compatible client (AI SDK `@ai-sdk/openai-compatible` chat model, called
//   through `doGenerate`, no SDK retries) pointed at the fake server with the harness's counting fetch.
//
// The echo tool gets the session id from the run id (`context.runId` = "peers-<session id>").
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// Charter's built JS: /work/main/dist by default. CHARTER_DIST may point at a private snapshot
// (bench/peers/snapshot-dist.sh) so that a long run is not disturbed by someone rebuilding dist/.
const DIST = process.env.CHARTER_DIST
  ? pathToFileURL(`${resolve(process.env.CHARTER_DIST)}/`).href
  : new URL("../../dist/", import.meta.url).href;
const charter = async (file) => import(new URL(file, DIST).href);
const { prepareAgent } = await charter("runner/prepare-agent.js");
const { defineFunctionTool } = await charter("tools/define-function-tool.js");
const { createOpenAICompatibleModelClient } = await charter(
  "model/providers/openai-compatible-model-client.js",
);
const { createInMemoryTranscriptWriter } = await charter("transcript/in-memory-transcript-writer.js");
const { verifyEntries } = await charter("transcript/verify-transcript.js");
const { systemEnvironment } = await charter("foundation/environment.js");
const { openRunStore } = await charter("store/open-run-store.js");
const { createStoreTranscriptWriter } = await charter("store/store-transcript-writer.js");
const { verifyStoredRun } = await charter("store/verify-stored-run.js");
const { createDurableRunHooks } = await charter("runner/durable-run-hooks.js");

// The harness's script module, resolved relative to the runner (run.mjs sits next to lib/), so that the
// adapter shares the runner's module instance (its session table and counters).
const HARNESS = process.env.BENCH_PEERS_DIR ?? dirnameOf(process.argv[1]);
const {
  openSession,
  finishSession,
  userPrompt,
  parsePrompt,
  scriptedModelCall,
  echoTool,
  SYSTEM_PROMPT,
  TOOL_NAME,
  TOOL_DESCRIPTION,
} = await import(pathToFileURL(`${HARNESS}/lib/script.mjs`).href);

function dirnameOf(file) {
  return file.slice(0, file.lastIndexOf("/"));
}

const charterVersion = JSON.parse(
  readFileSync(fileURLToPath(new URL("../../package.json", import.meta.url)), "utf8"),
).version;
const buildInfoFile = fileURLToPath(new URL("BUILD-INFO.json", DIST));
const buildInfo = existsSync(buildInfoFile) ? JSON.parse(readFileSync(buildInfoFile, "utf8")) : null;
// Charter is not in the harness's node_modules, so `packages` stays empty and the version is described here.
export const meta = {
  packages: [],
  description:
    `Charter ${charterVersion} from ${fileURLToPath(DIST)}` +
    (buildInfo
      ? ` (snapshot of src ${buildInfo.srcHash}, git ${buildInfo.gitHead.slice(0, 7)}, built ${buildInfo.builtAt})`
      : "") +
    ": prepareAgent() once + agent.run() per session, function tool, hash-chained transcript (head only by default); " +
    "inproc: ModelClient object; http: createOpenAICompatibleModelClient; " +
    "variants: memory (in-memory writer keeps every entry), sqlite (durable: SQLite run store, checkpoint at every COMMIT; " +
    "echo read-only), sqlite-unannotated (the same with an echo of unknown class: its call recorded before it runs)",
};

const RUN_PREFIX = "peers-";
const sessionOfRun = (runId) => runId.slice(RUN_PREFIX.length);

// The scenario's echo has no side effect, and says so (`readOnlyHint`, as an MCP server would): a durable turn
// calling it is one transaction. Variant `sqlite-unannotated` leaves the hint out (a tool of unknown class):
// the call is recorded before it runs, two transactions per turn.
const defineEcho = (annotations) =>
  defineFunctionTool({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    inputSchema: {
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
      additionalProperties: false,
    },
    ...(annotations ? { annotations } : {}),
    async execute(input, context) {
      return echoTool(sessionOfRun(context.runId), input.text);
    },
  });

let responseSeq = 0;
// Charter's ModelClient over the harness's scripted model.
const scriptedModel = {
  provider: "fake",
  model: "fake-model",
  async generate(request) {
    let first = null;
    let toolCalls = 0;
    for (const m of request.messages) {
      if (m.role === "user" && first === null) first = m.content;
      else if (m.role === "assistant") toolCalls += m.tool_calls.length;
    }
    const r = await scriptedModelCall(parsePrompt(first).id, toolCalls + 1);
    const n = ++responseSeq;
    if (r.type === "tool") {
      return {
        text: "",
        reasoning: "",
        toolCalls: [{ id: r.callId, name: r.toolName, argumentsText: JSON.stringify(r.args) }],
        usage: { inputTokens: r.usage.inputTokens, outputTokens: r.usage.outputTokens },
        finishReason: "tool-calls",
        responseId: null,
        rawRequest: null,
        rawResponse: { id: n, type: "tool" },
      };
    }
    return {
      text: r.text,
      reasoning: "",
      toolCalls: [],
      usage: { inputTokens: r.usage.inputTokens, outputTokens: r.usage.outputTokens },
      finishReason: "stop",
      responseId: null,
      rawRequest: null,
      rawResponse: { id: n, type: "text" },
    };
  },
};

// Default: the hash chain is computed for every entry (canonical JSON + BLAKE3, with secret redaction), but
// entries are not retained in memory: persistence is the run store's job (`npm run bench` measures it), and an
// in-memory writer would only measure a growing array. The first session of each process keeps its entries
// and must verify. Variant `charter:memory` (diagnostic) keeps every session's entries in an in-memory writer.
// Variant `charter:sqlite` is the durable run, to set beside `langgraph:sqlite`: Charter's SQLite run store (a
// file in a fresh temporary directory, WAL, synchronous=NORMAL), wired as the CLI wires it (store transcript
// writer + durable run hooks, told the tools' idempotency classes): a checkpoint with the entries it covers
// committed in one transaction at every continuing COMMIT, before the next inference, and before tools execute
// unless every call of the turn may run again (the read-only echo: one transaction per turn; variant
// `sqlite-unannotated`: two); each tool result stored with the checkpoint that follows its call; the outcome recorded before `agent.run` resolves. Like langgraph:sqlite, `reset()` (between
// repetitions, outside timing) starts a fresh database file. The first session of the process (warm-up, outside
// timing) must verify from the store (`verifyStoredRun`).
export default async function create({ transport = "inproc", variant, baseURL, fetch } = {}) {
  if (variant !== undefined && !["memory", "sqlite", "sqlite-unannotated"].includes(variant))
    throw new Error(`charter: unknown variant ${variant}`);
  const retainEntries = variant === "memory";
  const durable = variant === "sqlite" || variant === "sqlite-unannotated";
  const echo = defineEcho(variant === "sqlite-unannotated" ? null : { readOnlyHint: true });
  let scratch = null;
  let store = null;
  let storeGeneration = 0;
  let storeVerified = false;
  async function openStore() {
    await store?.close();
    if (scratch !== null) await rm(scratch, { recursive: true, force: true });
    scratch = await mkdtemp(join(tmpdir(), "charter-peers-"));
    store = await openRunStore({
      path: join(scratch, `runs-${++storeGeneration}.db`),
      environment: systemEnvironment,
    });
  }
  if (durable) await openStore();
  const invocation = { agent_path: "peers-bench", config_path: null, cwd: process.cwd(), set: [] };
  const model =
    transport === "http"
      ? createOpenAICompatibleModelClient({
          providerName: "fake",
          baseUrl: baseURL,
          model: "fake-model",
          apiKey: "x",
          fetch,
        })
      : scriptedModel;
  let agent = null;
  const prepare = (turns) =>
    prepareAgent({
      agent: {
        id: "peers-bench",
        systemPrompt: SYSTEM_PROMPT,
        settings: { toolPolicy: "optional", maxTurns: turns + 5, toolResponseMaxBytes: 1 << 20 },
      },
      targets: [{ provider: "fake", model: "fake-model", contextWindow: 1_000_000 }],
      models: [model],
      tools: [echo],
    });
  let preparedFor = -1;
  let verified = false;

  async function runSession({ turns, delayMs = 0 }) {
    // Prepared on the first session, since only runSession() learns T (fixed for a process): once per process.
    if (preparedFor !== turns) {
      agent = prepare(turns);
      preparedFor = turns;
    }
    const s = openSession(turns, delayMs);
    if (durable) return durableSession(s, turns);
    const writer = retainEntries || !verified ? createInMemoryTranscriptWriter() : null;
    const { result } = await agent.run({
      prompt: userPrompt(s),
      runId: RUN_PREFIX + s.id,
      ...(writer ? { transcriptWriter: writer } : {}),
    });
    checkResult(s, result, turns);
    if (!verified && writer) {
      // Once per process, on the first (warm-up) session, outside every timed region: the in-memory
      // transcript must verify (contract hash, every entry's hashes and chain links, raw payloads).
      const report = verifyEntries(writer.header, writer.contract, writer.entries, writer.raw);
      if (
        !report.ok ||
        report.entries !== writer.entries.length ||
        report.head_hash !== result.transcript.headHash
      ) {
        throw new Error(`charter: transcript of session ${s.id} does not verify: ${JSON.stringify(report)}`);
      }
      verified = true;
    }
    return finishSession(s, result.finalReport?.content);
  }

  async function durableSession(s, turns) {
    const runId = RUN_PREFIX + s.id;
    const runStore = store;
    const writer = createStoreTranscriptWriter({ store: runStore, agentId: "peers-bench" });
    const hooks = createDurableRunHooks({
      store: runStore,
      writer,
      runId,
      invocation,
      tools: { manifest: agent.contract.tool_manifest },
    });
    const { result } = await agent.run({
      prompt: userPrompt(s),
      runId,
      transcriptWriter: writer,
      checkpoint: hooks.checkpoint,
      wrapToolExecutor: hooks.wrapToolExecutor,
      beforeClose: hooks.finish,
    });
    checkResult(s, result, turns);
    if (!storeVerified) {
      // Once per process, on the first (warm-up) session, outside timing: the stored run must verify, end at the
      // session's chain head and be recorded as completed.
      storeVerified = true;
      const report = await verifyStoredRun(runStore, runId);
      const run = await runStore.getRun(runId);
      if (
        !report.ok ||
        report.head_hash !== result.transcript.headHash ||
        report.entries !== result.transcript.entries ||
        run?.status !== "completed"
      ) {
        throw new Error(
          `charter: stored run of session ${s.id} does not verify: ${JSON.stringify({ report, status: run?.status })}`,
        );
      }
    }
    return finishSession(s, result.finalReport?.content);
  }

  async function reset() {
    if (durable) await openStore();
  }

  async function close() {
    await store?.close();
    store = null;
    if (scratch !== null) await rm(scratch, { recursive: true, force: true });
    scratch = null;
  }
  return { runSession, reset, close };
}

function checkResult(s, result, turns) {
  if (!result.success || result.turns !== turns) {
    throw new Error(
      `charter: session ${s.id}: outcome ${result.outcome} after ${result.turns} turns ` +
        `(want ${turns}); error ${JSON.stringify(result.error)}`,
    );
  }
}
