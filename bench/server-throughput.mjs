// npm run bench:server: the HTTP server's throughput and added latency, beside a bare Fastify handler doing the same
// scripted work in the same run.
//
// The work of one run: a model call answered after MODEL_MS (20 ms) with one tool call, the tool (a REST tool, GET
// against a loopback handler), then a second model call answered after MODEL_MS with the final text. Both sides use
// the same scripted model server (OpenAI chat completions over real HTTP) and the same REST handler.
//
//   server  createServer on 127.0.0.1 over a SQLite store in a temporary folder, its runs executed by the in-process
//           dispatcher (WORKERS at once), each run started with `POST /v1/runs` and `wait: true` (the answer is the
//           finished run), through an API key as a client would; the run's agent has one REST tool.
//   bare    a Fastify route that makes the same two model calls and the tool call itself, with nothing stored.
//
// RUNS runs (1,000) are sent CONCURRENCY at a time (default all at once) from this process, to each side in turn
// (bare first, then the server; a warm-up of a few runs on each side before). Printed: runs/s of both and the ratio,
// the CPU time per run of both (this process's, the scripted servers' included), the latency percentiles of both and their differences (the added latency, queueing included, since both sides
// receive the same load), one-at-a-time latency (SERIAL runs, no queueing), the peak RSS and heap during each phase,
// and the checks: every run id answered once and stored once, every run completed, one tool execution and two model
// calls per run. A phase is cut off after TIME_LIMIT_SECONDS (300); what finished by then is reported.
//
//   npm run bench:server                      # 1,000 runs, all concurrent
//   RUNS=100 npm run bench:server             # a quick run
//   RUNS=1000 CONCURRENCY=200 WORKERS=64 npm run bench:server
//   BACKLOG=511 npm run bench:server          # both sides' listen queue (default CONCURRENCY + 64, at least 511)
//   RUNS=300 CONCURRENCY=100 PROFILE=server.cpuprofile npm run bench:server   # then bench/profile-summary.mjs
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import Fastify from "fastify";

const dist = new URL("../dist/", import.meta.url);
const load = (file) => import(new URL(file, dist).href);
const [
  { createServer },
  { createInProcessRunDispatcher },
  { createApiKey },
  { openRunStore },
  { createAgentCatalog },
  { loadConfiguration },
  { systemEnvironment },
  { createTenantConfigurationResolver },
  { startScriptedOpenAIServer },
  { startRestTestServer },
] = await Promise.all([
  load("server/create-server.js"),
  load("server/execution/in-process-run-dispatcher.js"),
  load("server/identity/create-api-key.js"),
  load("store/open-run-store.js"),
  load("agents/create-agent-catalog.js"),
  load("config/load-configuration.js"),
  load("foundation/environment.js"),
  load("server/tenants/resolve-tenant-settings.js"),
  load("testing/scripted-openai-server.js"),
  load("testing/rest-test-server.js"),
]);

const runs = Math.max(1, Number(process.env.RUNS ?? 1000));
const concurrency = Math.max(1, Math.min(runs, Number(process.env.CONCURRENCY ?? runs)));
const workers = Math.max(1, Number(process.env.WORKERS ?? concurrency));
const modelMs = Number(process.env.MODEL_MS ?? 20);
const serial = Math.max(0, Number(process.env.SERIAL ?? 20));
const timeLimitMs = Number(process.env.TIME_LIMIT_SECONDS ?? 300) * 1000;
const warmUp = Math.min(10, runs);
// Both sides' listen queue, long enough for the whole burst: with Node's default 511, the system reset connections
// of a 1,000-connection burst while the process was busy (what `charter serve --backlog` sets).
const backlog = Number(process.env.BACKLOG ?? Math.max(511, concurrency + 64));
const tenant = "bench";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- the scripted model and the tool, shared by both sides ----

/** The run number a model request is about: the prompt is `run <number>`. */
function runNumberOf(request) {
  const messages = request.body?.messages ?? [];
  const prompt = messages.find((message) => message.role === "user")?.content ?? "";
  const text = typeof prompt === "string" ? prompt : JSON.stringify(prompt);
  return /run ([\w-]+)/.exec(text)?.[1] ?? "unknown";
}

const model = await startScriptedOpenAIServer({
  async respond(request) {
    await sleep(modelMs);
    const messages = request.body?.messages ?? [];
    if (messages.some((message) => message.role === "tool")) return { kind: "text", text: "done" };
    return {
      kind: "tool_calls",
      calls: [{ name: "rest__read", arguments: { key: runNumberOf(request) } }],
    };
  },
});
const tools = await startRestTestServer((request) => ({ body: { item: request.path } }));

// ---- memory: the peak of RSS and heap while a phase runs ----

function memorySampler() {
  let rss = 0;
  let heap = 0;
  const sample = () => {
    const usage = process.memoryUsage();
    rss = Math.max(rss, usage.rss);
    heap = Math.max(heap, usage.heapUsed);
  };
  sample();
  const timer = setInterval(sample, 25);
  // How long the event loop was blocked: a synchronous wait (a busy database, say) stalls every run at once.
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  return {
    stop() {
      clearInterval(timer);
      delay.disable();
      sample();
      return { rss, heap, loopDelayP99: delay.percentile(99) / 1e6, loopDelayMax: delay.max / 1e6 };
    },
  };
}

// ---- a load: `count` requests, `limit` at a time, cut off after the time limit ----

async function drive(count, limit, send) {
  const latencies = [];
  const answers = [];
  const failures = [];
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeLimitMs);
  let next = 0;
  const started = performance.now();
  async function lane() {
    while (next < count && !deadline.signal.aborted) {
      const number = next++;
      const begin = performance.now();
      try {
        answers.push(await send(number, deadline.signal));
        latencies.push(performance.now() - begin);
      } catch (error) {
        failures.push({
          number,
          error:
            error?.name === "AbortError"
              ? "cut off by the time limit"
              : `${error}${error?.cause !== undefined ? ` (${error.cause.code ?? error.cause})` : ""}`,
        });
      }
    }
  }
  await Promise.all(Array.from({ length: limit }, lane));
  const elapsed = performance.now() - started;
  clearTimeout(timer);
  return { latencies, answers, failures, elapsed, cutOff: deadline.signal.aborted };
}

function percentile(values, fraction) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

// ---- the bare handler ----

async function postJson(url, body, signal, headers = {}) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url}: ${response.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

const bare = Fastify({ logger: false });
bare.post("/work", async (request) => {
  const { number } = request.body;
  const messages = [
    { role: "system", content: "You help with items." },
    { role: "user", content: `run ${number}` },
  ];
  const tool = { type: "function", function: { name: "rest__read", parameters: { type: "object" } } };
  const first = await postJson(`${model.baseUrl}/chat/completions`, { model: "m", messages, tools: [tool] });
  const call = first.choices[0].message.tool_calls[0];
  const key = JSON.parse(call.function.arguments).key;
  const toolAnswer = await fetch(`${tools.url}/items/${encodeURIComponent(key)}`);
  const toolText = await toolAnswer.text();
  const second = await postJson(`${model.baseUrl}/chat/completions`, {
    model: "m",
    messages: [
      ...messages,
      { role: "assistant", content: null, tool_calls: [call] },
      { role: "tool", tool_call_id: call.id, content: toolText },
    ],
    tools: [tool],
  });
  return { number, status: "completed", text: second.choices[0].message.content };
});
await bare.listen({ host: "127.0.0.1", port: 0, backlog });
const bareAddress = `http://127.0.0.1:${bare.server.address().port}`;

// ---- the server ----

const directory = await mkdtemp(join(tmpdir(), "charter-server-bench-"));
await mkdir(join(directory, "agents"));
await writeFile(
  join(directory, ".charter.json"),
  JSON.stringify({
    providers: {
      local: { type: "openai-compatible", baseUrl: model.baseUrl, models: { m: { contextWindow: 32000 } } },
    },
    restTools: {
      read: {
        method: "GET",
        url: `${tools.url}/items/\${parameters.key}`,
        parametersSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
      },
    },
  }),
);
await writeFile(
  join(directory, "agents", "helper.md"),
  "---\ndescription: Helps with items\nmodels: [local/m]\ntools: [rest__read]\ntoolPolicy: optional\nmaxTurns: 4\n---\nYou help with items.\n",
);
const configuration = (await loadConfiguration({ cwd: directory, homeDirectory: directory })).configuration;
const store = await openRunStore({ path: join(directory, "charter.db"), environment: systemEnvironment });
const dispatcher = createInProcessRunDispatcher({
  context: {
    store,
    agentCatalog: createAgentCatalog(),
    environment: systemEnvironment,
    cwd: directory,
    homeDirectory: directory,
    etcDirectory: join(directory, "etc"),
    runsDirectory: join(directory, "runs"),
    tenantConfiguration: createTenantConfigurationResolver({ store, configuration, processEnvironment: {} }),
  },
  workers,
});
await dispatcher.start();
const server = await createServer({
  store,
  dispatcher,
  environment: systemEnvironment,
  // The default allows 120 requests a minute per client address; every request here comes from one address.
  configuration: { rateLimits: { perAddress: 10_000_000 } },
});
const serverAddress = await server.listen({ host: "127.0.0.1", port: 0, backlog });
const { key } = await createApiKey(store.forTenant(tenant), {
  role: "operator",
  userId: null,
  name: null,
  now: systemEnvironment.now(),
});

// ---- the phases ----

const sendBare = (prefix) => (number, signal) =>
  postJson(`${bareAddress}/work`, { number: `${prefix}${number}` }, signal);
const sendServer = (prefix) => async (number, signal) => {
  const answer = await postJson(
    `${serverAddress}/v1/runs`,
    { agent: "helper", prompt: `run ${prefix}${number}`, wait: true },
    signal,
    { authorization: `Bearer ${key}` },
  );
  return { number: `${prefix}${number}`, ...answer };
};

// PROFILE=<file>: a CPU profile of the main thread during the server phase only (start-up and the bare phase
// left out), for `node bench/profile-summary.mjs <file>`.
async function profiled(enabled, action) {
  if (!enabled || process.env.PROFILE === undefined) return action();
  const { Session } = await import("node:inspector/promises");
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  try {
    return await action();
  } finally {
    const { profile } = await session.post("Profiler.stop");
    await writeFile(process.env.PROFILE, JSON.stringify(profile));
    session.disconnect();
  }
}

async function phase(name, send, profile = false) {
  globalThis.gc?.();
  const memory = memorySampler();
  const cpuBefore = process.cpuUsage();
  const result = await profiled(profile, () => drive(runs, concurrency, send));
  const cpu = process.cpuUsage(cpuBefore);
  // CPU time moves less than wall time on a shared machine: this process's, the scripted servers' included.
  return { name, ...result, memory: memory.stop(), cpuMs: (cpu.user + cpu.system) / 1000 };
}

const loadBefore = loadavg()[0];
const wallStart = performance.now();
await drive(warmUp, warmUp, sendBare("warm-b"));
await drive(warmUp, warmUp, sendServer("warm-s"));
const bareSerial = serial > 0 ? await drive(serial, 1, sendBare("serial-b")) : null;
const serverSerial = serial > 0 ? await drive(serial, 1, sendServer("serial-s")) : null;
const bareResult = await phase("bare Fastify handler", sendBare("b"));
const serverResult = await phase("Charter server", sendServer("s"), true);
const wallSeconds = (performance.now() - wallStart) / 1000;

// ---- the checks (untimed) ----

const toolRequests = tools.requests.map((request) => decodeURIComponent(request.path.replace("/items/", "")));
const countOf = (values) => {
  const counts = new Map();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
};
const toolCounts = countOf(toolRequests);
const modelCounts = countOf(model.requests.map(runNumberOf));
const answeredIds = serverResult.answers.map((answer) => answer.runId);
const stored = [];
for (let offset = 0; ; offset += 500) {
  const page = await store.forTenant(tenant).listRuns({ limit: 500, offset });
  stored.push(...page);
  if (page.length < 500) break;
}
const storedById = countOf(stored.map((run) => run.runId));
const benchStored = stored.filter((run) => answeredIds.includes(run.runId));
const everyNumber = Array.from({ length: runs }, (_, number) => `s${number}`);
const checks = {
  answered: serverResult.answers.length,
  failed: serverResult.failures.length,
  answeredIdsUnique: new Set(answeredIds).size === answeredIds.length,
  storedOnce: answeredIds.every((id) => storedById.get(id) === 1),
  completed: serverResult.answers.filter((answer) => answer.status === "completed").length,
  storedCompleted: benchStored.filter((run) => run.status === "completed").length,
  storedRuns: stored.length,
  expectedStoredRuns: runs + warmUp + serial,
  toolExecutions: everyNumber.reduce((sum, number) => sum + (toolCounts.get(number) ?? 0), 0),
  runsWithOtherThanOneTool: everyNumber.filter((number) => toolCounts.get(number) !== 1).length,
  runsWithOtherThanTwoModelCalls: everyNumber.filter((number) => modelCounts.get(number) !== 2).length,
  bareToolExecutions: Array.from({ length: runs }, (_, number) => toolCounts.get(`b${number}`) ?? 0).reduce(
    (sum, count) => sum + count,
    0,
  ),
};

// ---- the report ----

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const ms = (value) => `${value.toFixed(1)} ms`;
const throughput = (result) => (result.answers.length / result.elapsed) * 1000;
const lines = [];
const print = (line = "") => {
  lines.push(line);
  console.log(line);
};
print(`npm run bench:server, ${new Date().toISOString()}, Node ${process.version}`);
print(
  `RUNS=${runs} CONCURRENCY=${concurrency} WORKERS=${workers} MODEL_MS=${modelMs} SERIAL=${serial} BACKLOG=${backlog}; load ${loadBefore.toFixed(2)} -> ${loadavg()[0].toFixed(2)}; ${wallSeconds.toFixed(1)} s in all`,
);
print(
  "work per run: model call (+MODEL_MS) -> one REST tool call (GET, loopback) -> model call (+MODEL_MS); server: POST /v1/runs with wait: true, SQLite store, in-process workers",
);
print();
for (const result of [bareResult, serverResult]) {
  print(
    `${result.name.padEnd(22)} ${String(result.answers.length).padStart(5)} runs in ${(result.elapsed / 1000).toFixed(2)} s: ${throughput(result).toFixed(1)} runs/s, ${(result.cpuMs / Math.max(1, result.answers.length)).toFixed(1)} ms of CPU per run; latency p50 ${ms(percentile(result.latencies, 0.5))}, p99 ${ms(percentile(result.latencies, 0.99))}, max ${ms(Math.max(...result.latencies))}; peak RSS ${mb(result.memory.rss)}, heap ${mb(result.memory.heap)}; event loop blocked p99 ${ms(result.memory.loopDelayP99)}, max ${ms(result.memory.loopDelayMax)}${result.cutOff ? " (CUT OFF by the time limit)" : ""}${result.failures.length > 0 ? `; ${result.failures.length} failed, first: ${result.failures[0].error}` : ""}`,
  );
}
const ratio = throughput(serverResult) / throughput(bareResult);
const addedP50 = percentile(serverResult.latencies, 0.5) - percentile(bareResult.latencies, 0.5);
const addedP99 = percentile(serverResult.latencies, 0.99) - percentile(bareResult.latencies, 0.99);
print();
print(
  `throughput, server / bare: ${ratio.toFixed(3)}   (target >= 0.5: ${ratio >= 0.5 ? "met" : "NOT met"})`,
);
const cpuPerRun = (result) => result.cpuMs / Math.max(1, result.answers.length);
print(`CPU per run, server / bare: ${(cpuPerRun(serverResult) / cpuPerRun(bareResult)).toFixed(2)}`);
print(
  `added latency under load (server minus bare, same percentile): p50 ${ms(addedP50)}, p99 ${ms(addedP99)}   (target p99 < 50 ms: ${addedP99 < 50 ? "met" : "NOT met"})`,
);
if (bareSerial !== null && serverSerial !== null) {
  print(
    `one run at a time (${serial} each): bare p50 ${ms(percentile(bareSerial.latencies, 0.5))}, p99 ${ms(percentile(bareSerial.latencies, 0.99))}; server p50 ${ms(percentile(serverSerial.latencies, 0.5))}, p99 ${ms(percentile(serverSerial.latencies, 0.99))}; added p50 ${ms(percentile(serverSerial.latencies, 0.5) - percentile(bareSerial.latencies, 0.5))}, p99 ${ms(percentile(serverSerial.latencies, 0.99) - percentile(bareSerial.latencies, 0.99))}`,
  );
}
const lossFree =
  checks.answered === runs &&
  checks.answeredIdsUnique &&
  checks.storedOnce &&
  checks.completed === runs &&
  checks.storedCompleted === runs &&
  checks.storedRuns === checks.expectedStoredRuns &&
  checks.toolExecutions === runs &&
  checks.runsWithOtherThanOneTool === 0 &&
  checks.runsWithOtherThanTwoModelCalls === 0;
print(
  `no run lost or duplicated: ${lossFree ? "met" : "NOT met"} (answered ${checks.answered}/${runs}, failed ${checks.failed}, run ids unique ${checks.answeredIdsUnique}, each stored once ${checks.storedOnce}, completed ${checks.completed} (stored as completed ${checks.storedCompleted}), runs in the store ${checks.storedRuns}/${checks.expectedStoredRuns} with warm-up and serial, tool executions ${checks.toolExecutions}/${runs}, runs without exactly one tool call ${checks.runsWithOtherThanOneTool}, without exactly two model calls ${checks.runsWithOtherThanTwoModelCalls}; bare handler's tool executions ${checks.bareToolExecutions})`,
);

await server.close();
await dispatcher.drain();
await store.close();
await bare.close();
await model.close();
await tools.close();
await rm(directory, { recursive: true, force: true });
if (process.env.BENCH_OUTPUT !== undefined)
  await writeFile(process.env.BENCH_OUTPUT, `${lines.join("\n")}\n`);
