// The set-up shared by the two server benchmarks, `npm run bench:server` (bench/server-throughput.mjs) and
// `npm run bench:server:postgres` (bench/server-workers-postgres.mjs): the same scripted work per run, the same
// workspace, the same server and API key, the same load driver and the same checks, so that the two measure the
// same thing and differ only in where runs are stored and executed.
//
// The work of one run: a model call answered after `modelMs` with one tool call, the tool (a REST tool, GET against
// a loopback handler), then a second model call answered after `modelMs` with the final text.
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

/** The Charter build both benchmarks measure (run `npm run build` first; the npm scripts do). */
export const dist = new URL("../dist/", import.meta.url);
export const loadDist = (file) => import(new URL(file, dist).href);

const [
  { createServer },
  { createApiKey },
  { createAgentCatalog },
  { loadConfiguration },
  { systemEnvironment },
  { createTenantConfigurationResolver },
  { startScriptedOpenAIServer },
  { startRestTestServer },
] = await Promise.all([
  loadDist("server/create-server.js"),
  loadDist("server/identity/create-api-key.js"),
  loadDist("agents/create-agent-catalog.js"),
  loadDist("config/load-configuration.js"),
  loadDist("foundation/environment.js"),
  loadDist("server/tenants/resolve-tenant-settings.js"),
  loadDist("testing/scripted-openai-server.js"),
  loadDist("testing/rest-test-server.js"),
]);

export { systemEnvironment };

/** The tenant every benchmark run belongs to. */
export const benchTenant = "bench";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The run number a model request is about: the prompt is `run <number>`. */
export function runNumberOf(request) {
  const messages = request.body?.messages ?? [];
  const prompt = messages.find((message) => message.role === "user")?.content ?? "";
  const text = typeof prompt === "string" ? prompt : JSON.stringify(prompt);
  return /run ([\w-]+)/.exec(text)?.[1] ?? "unknown";
}

/** The scripted model (OpenAI chat completions over real HTTP) and the REST tool's handler, both on loopback. */
export async function startScriptedWork({ modelMs }) {
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
  return { model, tools };
}

/**
 * A temporary workspace with the provider, the REST tool and the `helper` agent (one REST tool, at most 4 turns),
 * and the dispatcher context that executes its runs against `store`.
 */
export async function createBenchWorkspace({ prefix, model, tools }) {
  const directory = await mkdtemp(join(tmpdir(), prefix));
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
  return {
    directory,
    dispatcherContext: (store) => ({
      store,
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
      }),
    }),
  };
}

/** The server on 127.0.0.1 over `store` and `dispatcher`, and an operator's API key to call it with. */
export async function startBenchServer({ store, dispatcher, backlog }) {
  const server = await createServer({
    store,
    dispatcher,
    environment: systemEnvironment,
    // The default allows 120 requests a minute per client address; every request here comes from one address.
    configuration: { rateLimits: { perAddress: 10_000_000 } },
  });
  const address = await server.listen({
    host: "127.0.0.1",
    port: 0,
    ...(backlog === undefined ? {} : { backlog }),
  });
  const { key } = await createApiKey(store.forTenant(benchTenant), {
    role: "operator",
    userId: null,
    name: null,
    now: systemEnvironment.now(),
  });
  return { server, address, key };
}

/**
 * POSTs `body` as JSON and answers the parsed JSON answer; throws when the status is not 2xx (or not `status`, when
 * given).
 */
export async function postJson(url, body, { signal, headers = {}, status } = {}) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  if (status === undefined ? !response.ok : response.status !== status)
    throw new Error(`${url}: ${response.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/**
 * A load: `count` requests, `limit` at a time, each `send(number, signal)`, cut off after `timeLimitMs` (what
 * finished by then is reported, and the rest as failures).
 */
export async function drive(count, limit, send, timeLimitMs) {
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

export function percentile(values, fraction) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

/** Runs per second of a load's answered runs. */
export const throughput = (result) => (result.answers.length / result.elapsed) * 1000;

export const ms = (value) => `${value.toFixed(1)} ms`;

/** How many times each run number reached the REST tool and the model: the checks' raw material. */
export function workCounts({ model, tools }) {
  const countOf = (values) => {
    const counts = new Map();
    for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
    return counts;
  };
  return {
    countOf,
    toolCounts: countOf(
      tools.requests.map((request) => decodeURIComponent(request.path.replace("/items/", ""))),
    ),
    modelCounts: countOf(model.requests.map(runNumberOf)),
  };
}

/** The report: printed as it goes, and written whole to BENCH_OUTPUT (when set) by `save`. */
export function benchReport() {
  const lines = [];
  return {
    print(line = "") {
      lines.push(line);
      console.log(line);
    },
    async save() {
      if (process.env.BENCH_OUTPUT !== undefined)
        await writeFile(process.env.BENCH_OUTPUT, `${lines.join("\n")}\n`);
    },
  };
}
