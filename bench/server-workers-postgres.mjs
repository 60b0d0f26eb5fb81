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
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";

const databaseUrl = process.env.CHARTER_TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? "";
if (databaseUrl === "") {
  console.error(
    "bench:server:postgres needs CHARTER_TEST_DATABASE_URL (a PostgreSQL database it may create a schema in)",
  );
  process.exit(2);
}

const dist = new URL("../dist/", import.meta.url);
const load = (file) => import(new URL(file, dist).href);
const [
  { createServer },
  { createPgBossRunDispatcher },
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
  load("server/workers/pg-boss-run-dispatcher.js"),
  load("server/identity/create-api-key.js"),
  load("store/open-run-store.js"),
  load("agents/create-agent-catalog.js"),
  load("config/load-configuration.js"),
  load("foundation/environment.js"),
  load("server/tenants/resolve-tenant-settings.js"),
  load("testing/scripted-openai-server.js"),
  load("testing/rest-test-server.js"),
]);

const runs = Math.max(1, Number(process.env.RUNS ?? 300));
const concurrency = Math.max(1, Math.min(runs, Number(process.env.CONCURRENCY ?? 100)));
const workerConcurrency = Math.max(1, Number(process.env.WORKER_CONCURRENCY ?? 20));
const modelMs = Number(process.env.MODEL_MS ?? 20);
const timeLimitMs = Number(process.env.TIME_LIMIT_SECONDS ?? 300) * 1000;
const tenant = "bench";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

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
    return { kind: "tool_calls", calls: [{ name: "rest__read", arguments: { key: runNumberOf(request) } }] };
  },
});
const tools = await startRestTestServer((request) => ({ body: { item: request.path } }));

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

const directory = await mkdtemp(join(tmpdir(), "charter-server-pg-bench-"));
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
const store = await openRunStore({ url: storeUrl.toString(), environment: systemEnvironment });
const dispatcher = await createPgBossRunDispatcher({
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
  url: storeUrl.toString(),
  workers: 0,
  pollMilliseconds: 100,
});
const server = await createServer({
  store,
  dispatcher,
  environment: systemEnvironment,
  configuration: { rateLimits: { perAddress: 10_000_000 } },
});
const serverAddress = await server.listen({ host: "127.0.0.1", port: 0 });
const { key } = await createApiKey(store.forTenant(tenant), {
  role: "operator",
  userId: null,
  name: null,
  now: systemEnvironment.now(),
});

// ---- `charter worker` processes ----

const workers = [];
async function startWorkerProcess() {
  const child = spawn(
    process.execPath,
    [
      new URL("cli/main.js", dist).pathname,
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

// ---- a load ----

async function drive(prefix, count, limit) {
  const latencies = [];
  const answers = [];
  const failures = [];
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeLimitMs);
  let next = 0;
  const started = performance.now();
  async function lane() {
    while (next < count && !deadline.signal.aborted) {
      const number = `${prefix}${next++}`;
      const begin = performance.now();
      try {
        const response = await fetch(`${serverAddress}/v1/runs`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          body: JSON.stringify({ agent: "helper", prompt: `run ${number}`, wait: true }),
          signal: deadline.signal,
        });
        const body = await response.json();
        if (response.status !== 200)
          throw new Error(`${response.status} ${JSON.stringify(body).slice(0, 200)}`);
        answers.push({ number, ...body });
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
  return { prefix, latencies, answers, failures, elapsed, cutOff: deadline.signal.aborted };
}

function percentile(values, fraction) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

const lines = [];
const print = (line = "") => {
  lines.push(line);
  console.log(line);
};
const ms = (value) => `${value.toFixed(1)} ms`;
const throughput = (result) => (result.answers.length / result.elapsed) * 1000;
const loadBefore = loadavg()[0];
const wallStart = performance.now();
const results = [];
try {
  await startWorkerProcess();
  await drive("warm-a", 10, 10);
  results.push(["1 worker", await drive("a", runs, concurrency)]);
  await startWorkerProcess();
  await drive("warm-b", 10, 10);
  results.push(["2 workers", await drive("b", runs, concurrency)]);

  const countOf = (values) => {
    const counts = new Map();
    for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
    return counts;
  };
  const toolCounts = countOf(
    tools.requests.map((request) => decodeURIComponent(request.path.replace("/items/", ""))),
  );
  const modelCounts = countOf(model.requests.map(runNumberOf));
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
      `${name.padEnd(10)} ${String(result.answers.length).padStart(5)} runs in ${(result.elapsed / 1000).toFixed(2)} s: ${throughput(result).toFixed(1)} runs/s; latency p50 ${ms(percentile(result.latencies, 0.5))}, p99 ${ms(percentile(result.latencies, 0.99))}${result.cutOff ? " (CUT OFF by the time limit)" : ""}; no run lost or duplicated: ${whole ? "met" : "NOT met"} (answered ${result.answers.length}/${runs}, ids unique ${new Set(ids).size === ids.length}, completed ${completed}, exactly one tool execution ${oneTool}, exactly two model calls ${twoModelCalls})${result.failures.length > 0 ? `; ${result.failures.length} failed, first: ${result.failures[0].error}` : ""}`,
    );
  }
  const [one, two] = results.map(([, result]) => throughput(result));
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
if (process.env.BENCH_OUTPUT !== undefined)
  await writeFile(process.env.BENCH_OUTPUT, `${lines.join("\n")}\n`);
