// npm run bench:server:postgres: how the server's throughput grows from one `charter worker` process to two, on a
// PostgreSQL store (pg-boss queue), in the same run.
//
// The same scripted work as `npm run bench:server` (a model call answered after MODEL_MS with one REST tool call,
// the tool, a second model call answered after MODEL_MS). The server (createServer on 127.0.0.1) only serves the
// API (`--workers 0`): its runs are queued with pg-boss and executed by `charter worker` child processes
// (`--concurrency WORKER_CONCURRENCY`, `--poll 100ms`) started in the benchmark's workspace. Phase 1: one worker;
// then a second worker starts and phase 2 sends the same load. Each phase sends RUNS runs (300), CONCURRENCY at a
// time (100), each `POST /v1/runs` with `wait: true`; the server learns that a run another process executed has
// settled by reading the store every 100 ms, so latencies have that granularity. Printed per phase: runs/s,
// latency p50/p99, and checks (every run answered once, completed, one tool execution and two model calls each);
// then the ratio of phase 2 to phase 1. A phase is cut off after TIME_LIMIT_SECONDS (300).
//
//   CHARTER_TEST_DATABASE_URL=postgres://... npm run bench:server:postgres
//   RUNS=100 CONCURRENCY=50 WORKER_CONCURRENCY=10 npm run bench:server:postgres
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import pg from "pg";
import * as bench from "./server-bench-setup.mjs";

const databaseUrl = process.env.CHARTER_TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? "";
if (databaseUrl === "") {
  console.error(
    "bench:server:postgres needs CHARTER_TEST_DATABASE_URL (a PostgreSQL database it may create a schema in)",
  );
  process.exit(2);
}

const [{ createPgBossRunDispatcher }, { openRunStore }] = await Promise.all([
  bench.loadDist("server/workers/pg-boss-run-dispatcher.js"),
  bench.loadDist("store/open-run-store.js"),
]);

const runs = Math.max(1, Number(process.env.RUNS ?? 300));
const concurrency = Math.max(1, Math.min(runs, Number(process.env.CONCURRENCY ?? 100)));
const workerConcurrency = Math.max(1, Number(process.env.WORKER_CONCURRENCY ?? 20));
const modelMs = Number(process.env.MODEL_MS ?? 20);
const timeLimitMs = Number(process.env.TIME_LIMIT_SECONDS ?? 300) * 1000;

const { model, tools } = await bench.startScriptedWork({ modelMs });

// The store: a schema of its own (its queue in `<schema>_queue`), dropped at the end.
const schema = `charter_bench_${randomUUID().replaceAll("-", "").slice(0, 16)}`;
async function sql(text) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
await sql(`create schema ${schema}`);
const storeUrl = new URL(databaseUrl);
storeUrl.searchParams.set("options", `-c search_path=${schema}`);

const { directory, dispatcherContext } = await bench.createBenchWorkspace({
  prefix: "charter-server-pg-bench-",
  model,
  tools,
});
const store = await openRunStore({ url: storeUrl.toString(), environment: bench.systemEnvironment });
const dispatcher = await createPgBossRunDispatcher({
  context: dispatcherContext(store),
  url: storeUrl.toString(),
  workers: 0,
  pollMilliseconds: 100,
});
const { server, address: serverAddress, key } = await bench.startBenchServer({ store, dispatcher });

// ---- `charter worker` processes ----

const workers = [];
async function startWorkerProcess() {
  const child = spawn(
    process.execPath,
    [
      new URL("cli/main.js", bench.dist).pathname,
      "worker",
      "--store",
      storeUrl.toString(),
      "--concurrency",
      String(workerConcurrency),
      "--poll",
      "100ms",
    ],
    {
      cwd: directory,
      env: { ...process.env, HOME: directory, CHARTER_DATABASE_URL: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const exited = new Promise((resolve) => child.once("exit", resolve));
  workers.push({ child, exited });
  await new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk.toString("utf8");
      if (output.includes("taking runs from")) resolve();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`charter worker exited (${code}): ${output}`)));
  });
}

// ---- a load: each run `POST /v1/runs` with `wait: true`, its number `<prefix><index>` ----

async function load(prefix, count, limit) {
  const send = async (index, signal) => {
    const number = `${prefix}${index}`;
    const answer = await bench.postJson(
      `${serverAddress}/v1/runs`,
      { agent: "helper", prompt: `run ${number}`, wait: true },
      { signal, headers: { authorization: `Bearer ${key}` }, status: 200 },
    );
    return { number, ...answer };
  };
  return { prefix, ...(await bench.drive(count, limit, send, timeLimitMs)) };
}

const { print, save } = bench.benchReport();
const loadBefore = loadavg()[0];
const wallStart = performance.now();
const results = [];
try {
  await startWorkerProcess();
  await load("warm-a", 10, 10);
  results.push(["1 worker", await load("a", runs, concurrency)]);
  await startWorkerProcess();
  await load("warm-b", 10, 10);
  results.push(["2 workers", await load("b", runs, concurrency)]);

  const { toolCounts, modelCounts } = bench.workCounts({ model, tools });
  print(`npm run bench:server:postgres, ${new Date().toISOString()}, Node ${process.version}`);
  print(
    `RUNS=${runs} per phase, CONCURRENCY=${concurrency}, WORKER_CONCURRENCY=${workerConcurrency} per worker process, MODEL_MS=${modelMs}; load ${loadBefore.toFixed(2)} -> ${loadavg()[0].toFixed(2)}; ${((performance.now() - wallStart) / 1000).toFixed(1)} s in all`,
  );
  print(
    "server: API only (pg-boss queue, PostgreSQL store), POST /v1/runs with wait: true; runs executed by `charter worker` child processes",
  );
  print();
  for (const [name, result] of results) {
    const numbers = Array.from({ length: runs }, (_, index) => `${result.prefix}${index}`);
    const ids = result.answers.map((answer) => answer.runId);
    const completed = result.answers.filter((answer) => answer.status === "completed").length;
    const oneTool = numbers.filter((number) => toolCounts.get(number) === 1).length;
    const twoModelCalls = numbers.filter((number) => modelCounts.get(number) === 2).length;
    const whole =
      result.answers.length === runs &&
      new Set(ids).size === ids.length &&
      completed === runs &&
      oneTool === runs &&
      twoModelCalls === runs;
    print(
      `${name.padEnd(10)} ${String(result.answers.length).padStart(5)} runs in ${(result.elapsed / 1000).toFixed(2)} s: ${bench.throughput(result).toFixed(1)} runs/s; latency p50 ${bench.ms(bench.percentile(result.latencies, 0.5))}, p99 ${bench.ms(bench.percentile(result.latencies, 0.99))}${result.cutOff ? " (CUT OFF by the time limit)" : ""}; no run lost or duplicated: ${whole ? "met" : "NOT met"} (answered ${result.answers.length}/${runs}, ids unique ${new Set(ids).size === ids.length}, completed ${completed}, exactly one tool execution ${oneTool}, exactly two model calls ${twoModelCalls})${result.failures.length > 0 ? `; ${result.failures.length} failed, first: ${result.failures[0].error}` : ""}`,
    );
  }
  const [one, two] = results.map(([, result]) => bench.throughput(result));
  print();
  print(
    `throughput, two workers / one: ${(two / one).toFixed(3)} (the server process and both workers share this machine's cores)`,
  );
} finally {
  for (const { child, exited } of workers) {
    child.kill("SIGTERM");
    await exited;
  }
  await server.close();
  await dispatcher.close();
  await store.close();
  await model.close();
  await tools.close();
  await rm(directory, { recursive: true, force: true });
  await sql(`drop schema if exists ${schema} cascade; drop schema if exists ${schema}_queue cascade`);
}
await save();
