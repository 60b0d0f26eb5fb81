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
import { rm, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import Fastify from "fastify";
import {
  benchReport,
  benchTenant,
  createBenchWorkspace,
  drive,
  loadDist,
  ms,
  percentile,
  postJson,
  startBenchServer,
  startScriptedWork,
  systemEnvironment,
  throughput,
  workCounts,
} from "./server-bench-setup.mjs";

const [{ createInProcessRunDispatcher }, { openRunStore }] = await Promise.all([
  loadDist("server/execution/in-process-run-dispatcher.js"),
  loadDist("store/open-run-store.js"),
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
const tenant = benchTenant;

// ---- the scripted model and the tool, shared by both sides ----

const { model, tools } = await startScriptedWork({ modelMs });

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

// ---- the bare handler ----

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

const { directory, dispatcherContext } = await createBenchWorkspace({
  prefix: "charter-server-bench-",
  model,
  tools,
});
const store = await openRunStore({ path: join(directory, "charter.db"), environment: systemEnvironment });
const dispatcher = createInProcessRunDispatcher({ context: dispatcherContext(store), workers });
await dispatcher.start();
const { server, address: serverAddress, key } = await startBenchServer({ store, dispatcher, backlog });

// ---- the phases ----

const sendBare = (prefix) => (number, signal) =>
  postJson(`${bareAddress}/work`, { number: `${prefix}${number}` }, { signal });
const sendServer = (prefix) => async (number, signal) => {
  const answer = await postJson(
    `${serverAddress}/v1/runs`,
    { agent: "helper", prompt: `run ${prefix}${number}`, wait: true },
    { signal, headers: { authorization: `Bearer ${key}` } },
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
  const result = await profiled(profile, () => drive(runs, concurrency, send, timeLimitMs));
  const cpu = process.cpuUsage(cpuBefore);
  // CPU time moves less than wall time on a shared machine: this process's, the scripted servers' included.
  return { name, ...result, memory: memory.stop(), cpuMs: (cpu.user + cpu.system) / 1000 };
}

const loadBefore = loadavg()[0];
const wallStart = performance.now();
await drive(warmUp, warmUp, sendBare("warm-b"), timeLimitMs);
await drive(warmUp, warmUp, sendServer("warm-s"), timeLimitMs);
const bareSerial = serial > 0 ? await drive(serial, 1, sendBare("serial-b"), timeLimitMs) : null;
const serverSerial = serial > 0 ? await drive(serial, 1, sendServer("serial-s"), timeLimitMs) : null;
const bareResult = await phase("bare Fastify handler", sendBare("b"));
const serverResult = await phase("Charter server", sendServer("s"), true);
const wallSeconds = (performance.now() - wallStart) / 1000;

// ---- the checks (untimed) ----

const { countOf, toolCounts, modelCounts } = workCounts({ model, tools });
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
const { print, save } = benchReport();
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
await save();
