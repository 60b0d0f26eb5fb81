import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemEnvironment } from "../../src/foundation/environment.js";
import { createApiKey } from "../../src/server/identity/create-api-key.js";
import { runTraceIds } from "../../src/server/telemetry/run-trace-ids.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import {
  type ScriptedResponder,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { charterProcess, mcpTestServerPath } from "../cli/cli-harness.js";
import { hasPath, metricPointsOf, spansOf } from "./otlp-json.js";
import { type OtlpReceiver, startOtlpReceiver } from "./otlp-receiver.js";
import { startServeProcess } from "./serve-process.js";

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

// What a caller typed and a tool answered: neither may reach the collector.
const argumentValue = "argument-value-never-exported";
const providerKey = "sk-telemetry-provider-key-4242";
const callerTraceId = "4bf92f3577b34da6a3ce929d0e0e4736";
const callerSpanId = "00f067aa0ba902b7";

// A loader hook in the child process lists every package it loaded (see test/cli/start-up-imports.test.ts).
const listLoadedPackages = `
import { registerHooks } from "node:module";
const loaded = new Set();
registerHooks({
  load(url, context, next) {
    const match = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(url);
    if (match) loaded.add(match[1]);
    return next(url, context);
  },
});
process.on("exit", () => process.stderr.write("\\nloaded-packages:" + JSON.stringify([...loaded]) + "\\n"));
`;

function loadedPackagesOf(stderr: string): string[] {
  const line = stderr.split("\n").find((text) => text.startsWith("loaded-packages:"));
  expect(line, stderr).toBeDefined();
  return JSON.parse(line!.slice("loaded-packages:".length)) as string[];
}

interface ServedProject {
  readonly directory: string;
  readonly store: string;
  readonly key: string;
}

/**
 * A project whose `helper` agent calls the MCP test server's `echo` tool, on two model targets of the scripted
 * server (`local/m` fails its first request with HTTP 500, so the turn fails over to `local/n` at once), and an
 * operator key of tenant `acme`.
 */
async function servedProject(
  respond: ScriptedResponder = (_request, index) =>
    index === 0
      ? { kind: "error", status: 500 }
      : index === 1
        ? {
            kind: "tool_calls",
            calls: [{ id: "call_echo", name: "test__echo", arguments: { text: argumentValue } }],
          }
        : { kind: "text", text: "echoed" },
): Promise<ServedProject> {
  const directory = await mkdtemp(join(tmpdir(), "charter-telemetry-"));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  const model = await startScriptedOpenAIServer({ respond });
  cleanups.push(() => model.close());
  await mkdir(join(directory, "agents"));
  await writeFile(
    join(directory, "agents", "helper.md"),
    "---\ndescription: Echoes\nmodels: [local/m, local/n]\ntools: [test]\ntoolPolicy: optional\nmaxTurns: 4\n---\nYou echo what you are told.\n",
  );
  // Its record tool is destructive: each call waits for a person's approval.
  await writeFile(
    join(directory, "agents", "recorder.md"),
    "---\ndescription: Records\nmodels: [local/n]\ntools: [test]\ntoolPolicy: optional\nmaxTurns: 4\ndestructiveTools: [test__record]\n---\nYou record what you are told.\n",
  );
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({
      providers: {
        local: {
          type: "openai-compatible",
          baseUrl: model.baseUrl,
          apiKey: providerKey,
          models: { m: { contextWindow: 32000 }, n: { contextWindow: 32000 } },
        },
      },
      mcpServers: {
        test: {
          type: "stdio",
          command: process.execPath,
          args: [mcpTestServerPath],
          env: { CHARTER_TEST_RECORD_FILE: join(directory, "records.jsonl") },
        },
      },
      // The read-only echo is cached: its span says whether the cache answered.
      toolCache: { test: "5m" },
    }),
  );
  await writeFile(join(directory, "list-loaded-packages.mjs"), listLoadedPackages);
  // The key is made in process, as `charter keys create` makes it (a process less per test: the command itself
  // is tested in keys-command.test.ts).
  const path = join(directory, "serve.db");
  const opened = await openRunStore({ path, environment: systemEnvironment });
  try {
    const created = await createApiKey(opened.forTenant("acme"), {
      role: "operator",
      userId: "ada",
      name: null,
      now: Date.now(),
    });
    return { directory, store: `sqlite:${path}`, key: created.key };
  } finally {
    await opened.close();
  }
}

/** Every OpenTelemetry variable unset, so the child sees only what a test gives it. */
const noTelemetry = {
  OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: undefined,
  OTEL_EXPORTER_OTLP_PROTOCOL: undefined,
  OTEL_EXPORTER_OTLP_HEADERS: undefined,
  OTEL_SERVICE_NAME: undefined,
  OTEL_RESOURCE_ATTRIBUTES: undefined,
  OTEL_SDK_DISABLED: undefined,
  OTEL_BSP_SCHEDULE_DELAY: undefined,
  OTEL_METRIC_EXPORT_INTERVAL: undefined,
};

async function serve(project: ServedProject, env: Readonly<Record<string, string | undefined>>) {
  const served = await startServeProcess(["--port", "0", "--store", project.store, "--workers", "1"], {
    cwd: project.directory,
    env: {
      HOME: project.directory,
      NODE_OPTIONS: `--import ${join(project.directory, "list-loaded-packages.mjs")}`,
      ...noTelemetry,
      ...env,
    },
  });
  cleanups.push(async () => {
    if (served.child.exitCode === null) await served.stop("SIGTERM");
  });
  return served;
}

async function runToTheEnd(address: string, key: string, headers: Readonly<Record<string, string>> = {}) {
  const response = await fetch(`${address}/v1/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ agent: "helper", prompt: "Echo something.", wait: true }),
  });
  const run = (await response.json()) as { runId: string; status: string };
  expect(response.status, JSON.stringify(run)).toBe(200);
  expect(run.status).toBe("completed");
  return run;
}

async function receiver(options: Parameters<typeof startOtlpReceiver>[0] = {}): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver(options);
  cleanups.push(() => started.close());
  return started;
}

// Each test starts charter serve (and the MCP test server) as real child processes: slow on a loaded machine.
describe("OpenTelemetry export of charter serve's runs", { timeout: 120_000 }, () => {
  it("exports the run's span tree with the GenAI conventions, joined to the caller's trace, and its metrics, flushed on SIGTERM (http/json)", async () => {
    const collector = await receiver();
    const project = await servedProject();
    const served = await serve(project, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=collector%20secret",
      OTEL_SERVICE_NAME: "charter-under-test",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test",
      // Nothing is sent on a timer within the test: what arrives, the SIGTERM drain sent.
      OTEL_BSP_SCHEDULE_DELAY: "600000",
      OTEL_METRIC_EXPORT_INTERVAL: "600000",
    });
    const run = await runToTheEnd(served.address, project.key, {
      traceparent: `00-${callerTraceId}-${callerSpanId}-01`,
      // The provider's key, where no caller should put it: the span shows it redacted.
      "x-correlation-id": `order-4711-${providerKey}`,
    });
    // Spans wait for their batch, metrics for their interval: SIGTERM's drain sends both before the process exits.
    expect(collector.exports).toEqual([]);
    expect(await served.stop("SIGTERM")).toBe(0);
    const exports = await collector.waitFor(
      "the run's spans and metrics",
      (received) => hasPath("/v1/traces")(received) && hasPath("/v1/metrics")(received),
    );
    for (const each of exports) {
      expect(each.contentType).toMatch(/^application\/json/);
      expect(each.headers["x-collector-key"]).toBe("collector secret");
      const text = each.body.toString("utf8");
      // Tool arguments and results are never exported, nor a secret of the configuration.
      expect(text).not.toContain(argumentValue);
      expect(text).not.toContain(providerKey);
    }

    const spans = spansOf(exports);
    const runSpan = spans.find((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent");
    expect(runSpan).toBeDefined();
    const root = runSpan!;
    expect(root.resource["service.name"]).toBe("charter-under-test");
    expect(root.resource["deployment.environment"]).toBe("test");
    expect(root.name).toBe("invoke_agent helper");
    // The caller's trace: the run's span is a child of the span its traceparent named.
    expect(root.traceId).toBe(callerTraceId);
    expect(root.parentSpanId).toBe(callerSpanId);
    expect(root.status.code).not.toBe(2);
    expect(root.attributes).toMatchObject({
      "gen_ai.agent.name": "helper",
      "gen_ai.provider.name": "local",
      "gen_ai.request.model": "m",
      "charter.run.id": run.runId,
      "charter.tenant.id": "acme",
      "charter.user.id": "ada",
      "charter.role": "operator",
      "charter.execution.kind": "start",
      "charter.resumed": false,
      "charter.execution.status": "completed",
      "charter.outcome": "COMPLETED_WITH_TOOLS",
      "charter.run.final_state": "failover",
    });
    expect(root.attributes["charter.correlation.id"]).toMatch(/^order-4711-\[REDACTED/);
    expect(root.attributes["charter.contract.hash"]).toMatch(/^[0-9a-f]{64}$|^sha256:/);
    expect(typeof root.attributes["charter.request.id"]).toBe("string");

    const children = spans.filter((span) => span !== root);
    // Every model call attempt and the tool call are the run span's children, within its time.
    for (const child of children) {
      expect(child.traceId).toBe(callerTraceId);
      expect(child.parentSpanId).toBe(root.spanId);
      expect(child.startNanoseconds >= root.startNanoseconds).toBe(true);
      expect(child.endNanoseconds <= root.endNanoseconds).toBe(true);
      expect(child.endNanoseconds >= child.startNanoseconds).toBe(true);
    }
    const chats = children.filter((span) => span.attributes["gen_ai.operation.name"] === "chat");
    const tools = children.filter((span) => span.attributes["gen_ai.operation.name"] === "execute_tool");
    expect(chats).toHaveLength(3);
    expect(tools).toHaveLength(1);
    expect(children).toHaveLength(4);
    const failed = chats.find(
      (span) => span.attributes["charter.turn"] === 1 && span.attributes["charter.attempt"] === 1,
    );
    expect(failed?.name).toBe("chat m");
    expect(failed?.status.code).toBe(2);
    expect(failed?.attributes).toMatchObject({
      "gen_ai.provider.name": "local",
      "gen_ai.request.model": "m",
      "charter.retry": false,
      "charter.failover": false,
    });
    expect(typeof failed?.attributes["error.type"]).toBe("string");
    expect(failed?.attributes["gen_ai.response.model"]).toBeUndefined();
    const retried = chats.find(
      (span) => span.attributes["charter.turn"] === 1 && span.attributes["charter.attempt"] === 2,
    );
    expect(retried?.name).toBe("chat n");
    expect(retried?.status.code).not.toBe(2);
    expect(retried?.attributes).toMatchObject({
      "gen_ai.request.model": "n",
      "gen_ai.response.model": "n",
      "charter.retry": true,
      "charter.failover": true,
    });
    expect(retried?.attributes["error.type"]).toBeUndefined();
    expect(Number(retried?.attributes["gen_ai.usage.input_tokens"])).toBeGreaterThan(0);
    expect(Number(retried?.attributes["gen_ai.usage.output_tokens"])).toBeGreaterThan(0);
    // The chat span is the model call's client side.
    expect(retried?.kind).toBe(3);
    const tool = tools[0]!;
    expect(tool.name).toBe("execute_tool test__echo");
    expect(tool.attributes).toMatchObject({
      "gen_ai.tool.name": "test__echo",
      "gen_ai.tool.call.id": "call_echo",
      "charter.tool.status": "ok",
      "charter.tool.cache_hit": false,
      "charter.turn": 1,
    });
    expect(tool.attributes["charter.tool.arguments_size"]).toBe(
      JSON.stringify({ text: argumentValue }).length,
    );
    expect(Number(tool.attributes["charter.tool.result_size"])).toBeGreaterThan(0);
    // The tool ran after the turn's answer and before the next turn's model call.
    expect(tool.startNanoseconds >= retried!.endNanoseconds).toBe(true);
    const answer = chats.find((span) => span.attributes["charter.turn"] === 2);
    expect(tool.endNanoseconds <= answer!.startNanoseconds).toBe(true);
    // The run's token totals are its model calls'.
    expect(root.attributes["gen_ai.usage.input_tokens"]).toBe(
      chats.reduce((sum, span) => sum + Number(span.attributes["gen_ai.usage.input_tokens"]), 0),
    );

    const points = metricPointsOf(exports);
    const tokenPoints = points.filter((point) => point.metric === "gen_ai.client.token.usage");
    expect(tokenPoints.every((point) => point.unit === "{token}")).toBe(true);
    expect(new Set(tokenPoints.map((point) => point.attributes["gen_ai.token.type"]))).toEqual(
      new Set(["input", "output"]),
    );
    // Two successful calls of model n recorded their tokens; the failed call of m used none.
    const inputOfN = tokenPoints.find(
      (point) =>
        point.attributes["gen_ai.token.type"] === "input" && point.attributes["gen_ai.request.model"] === "n",
    );
    expect(inputOfN?.count).toBe(2);
    expect(inputOfN?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "local",
    });
    const durations = points.filter((point) => point.metric === "gen_ai.client.operation.duration");
    expect(durations.every((point) => point.unit === "s")).toBe(true);
    const failedDuration = durations.find((point) => point.attributes["error.type"] !== undefined);
    expect(failedDuration?.attributes["gen_ai.request.model"]).toBe("m");
    expect(failedDuration?.count).toBe(1);
    expect(durations.reduce((sum, point) => sum + point.count, 0)).toBe(3);
    const toolDuration = points.find((point) => point.metric === "gen_ai.execute_tool.duration");
    expect(toolDuration).toMatchObject({ unit: "s", count: 1 });
    expect(toolDuration?.attributes["gen_ai.tool.name"]).toBe("test__echo");
    const runs = points.filter((point) => point.metric === "charter.runs");
    expect(runs).toEqual([
      {
        metric: "charter.runs",
        unit: "{run}",
        attributes: {
          "charter.run.final_state": "failover",
          "gen_ai.agent.name": "helper",
          "charter.tenant.id": "acme",
        },
        count: 1,
        sum: 1,
      },
    ]);

    // Only the JSON exporters of the SDK were loaded: the protobuf ones are not on this path.
    const packages = loadedPackagesOf(served.output().stderr);
    expect(packages).toEqual(
      expect.arrayContaining(["@opentelemetry/sdk-trace", "@opentelemetry/exporter-trace-otlp-http"]),
    );
    expect(packages).not.toContain("@opentelemetry/exporter-trace-otlp-proto");
  });

  it("exports OTLP protobuf by default, to the signal's own endpoint, a trace of the run's own without a valid traceparent, the caller's for a chat completion with one", async () => {
    const collector = await receiver();
    const project = await servedProject();
    const served = await serve(project, {
      // The signal's own endpoint is used as it is given; the metrics go nowhere.
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.endpoint}/custom/traces`,
    });
    // An invalid traceparent is ignored, as W3C Trace Context says: the run is served as any other.
    const run = await runToTheEnd(served.address, project.key, { traceparent: "00-not-a-trace-01" });
    // A run started through the OpenAI-compatible route joins the caller's trace as well.
    const completion = await fetch(`${served.address}/v1/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${project.key}`,
        "content-type": "application/json",
        traceparent: `00-${callerTraceId}-${callerSpanId}-01`,
      },
      body: JSON.stringify({ model: "helper", messages: [{ role: "user", content: "Echo again." }] }),
    });
    expect(completion.status).toBe(200);
    expect(await served.stop("SIGTERM")).toBe(0);
    const exports = await collector.waitFor("the run's spans", hasPath("/custom/traces"));
    expect(exports.every((each) => each.path === "/custom/traces")).toBe(true);
    for (const each of exports) {
      expect(each.contentType).toBe("application/x-protobuf");
      // Protobuf keeps strings as UTF-8 bytes: the span names and attributes are there, the arguments are not.
      const bytes = each.body.toString("latin1");
      expect(bytes).not.toContain(argumentValue);
      expect(bytes).not.toContain(providerKey);
    }
    const bytes = Buffer.concat(exports.map((each) => each.body)).toString("latin1");
    for (const text of [
      "invoke_agent helper",
      "chat m",
      "chat n",
      "execute_tool test__echo",
      "gen_ai.tool.call.id",
    ])
      expect(bytes).toContain(text);
    // The run's own trace, whose id derives from the run id (so that a continuation finds it).
    expect(bytes).toContain(Buffer.from(runTraceIds(run.runId).traceId, "hex").toString("latin1"));
    // The chat completion's run: its span in the caller's trace, the caller's span as its parent.
    expect(bytes).toContain(Buffer.from(callerTraceId, "hex").toString("latin1"));
    expect(bytes).toContain(Buffer.from(callerSpanId, "hex").toString("latin1"));
  });

  it("a run continued after a person's approval is a second invoke_agent span in the run's trace, linked to the first", async () => {
    const collector = await receiver();
    const project = await servedProject((_request, index) =>
      index === 0
        ? {
            kind: "tool_calls",
            calls: [
              { id: "call_record", name: "test__record", arguments: { key: "k", value: argumentValue } },
            ],
          }
        : { kind: "text", text: "recorded" },
    );
    const served = await serve(project, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    });
    const headers = { authorization: `Bearer ${project.key}`, "content-type": "application/json" };
    const started = await fetch(`${served.address}/v1/runs`, {
      method: "POST",
      headers,
      body: JSON.stringify({ agent: "recorder", prompt: "Record k.", wait: true }),
    });
    const waiting = (await started.json()) as { runId: string; status: string };
    expect(waiting.status).toBe("awaiting_approval");
    const approved = await fetch(`${served.address}/v1/runs/${waiting.runId}/approvals`, {
      method: "POST",
      headers,
      body: JSON.stringify({ callId: "call_record", decision: "approve" }),
    });
    expect(approved.status).toBe(202);
    // The run's event stream ends with its last event.
    const events = await (
      await fetch(`${served.address}/v1/runs/${waiting.runId}/events`, {
        headers: { authorization: headers.authorization },
      })
    ).text();
    expect(events).toContain("event: COMPLETED");
    expect(await served.stop("SIGTERM")).toBe(0);
    const exports = await collector.waitFor("the run's spans", hasPath("/v1/traces"));
    const spans = spansOf(exports);
    for (const each of exports) expect(each.body.toString("utf8")).not.toContain(argumentValue);
    const executions = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent");
    expect(executions).toHaveLength(2);
    const [first, second] = [
      executions.find((span) => span.attributes["charter.execution.kind"] === "start")!,
      executions.find((span) => span.attributes["charter.execution.kind"] === "decision")!,
    ];
    // No caller's trace: the run's own, whose ids derive from the run id, so any worker continues it.
    const ids = runTraceIds(waiting.runId);
    expect(first.traceId).toBe(ids.traceId);
    expect(first.spanId).toBe(ids.firstSpanId);
    expect(first.parentSpanId).toBe("");
    expect(first.attributes).toMatchObject({
      "charter.execution.status": "awaiting_approval",
      "charter.resumed": false,
    });
    expect(first.attributes["charter.run.final_state"]).toBeUndefined();
    expect(second.traceId).toBe(ids.traceId);
    expect(second.parentSpanId).toBe("");
    expect(second.spanId).not.toBe(first.spanId);
    expect(second.links).toEqual([
      expect.objectContaining({ traceId: ids.traceId, spanId: ids.firstSpanId }),
    ]);
    expect(second.attributes).toMatchObject({
      "gen_ai.agent.name": "recorder",
      "charter.resumed": true,
      "charter.execution.status": "completed",
      "charter.run.final_state": "success",
    });
    expect(second.startNanoseconds >= first.endNanoseconds).toBe(true);
    // The call waited under the first execution and ran under the second.
    const recordSpans = spans.filter((span) => span.attributes["gen_ai.tool.name"] === "test__record");
    expect(recordSpans.map((span) => [span.parentSpanId, span.attributes["charter.tool.status"]])).toEqual(
      expect.arrayContaining([
        [first.spanId, "awaiting_approval"],
        [second.spanId, "ok"],
      ]),
    );
    expect(recordSpans).toHaveLength(2);
  });

  it("without an endpoint, exports nothing and loads no OpenTelemetry package; OTEL_SDK_DISABLED=true turns an endpoint off", async () => {
    const collector = await receiver();
    const project = await servedProject();
    const plain = await serve(project, { OTEL_SERVICE_NAME: "charter-quiet" });
    await runToTheEnd(plain.address, project.key, { traceparent: `00-${callerTraceId}-${callerSpanId}-01` });
    expect(await plain.stop("SIGTERM")).toBe(0);
    expect(
      loadedPackagesOf(plain.output().stderr).filter((name) => name.startsWith("@opentelemetry/")),
    ).toEqual([]);

    const disabled = await serve(project, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_SDK_DISABLED: "true",
    });
    await runToTheEnd(disabled.address, project.key);
    expect(await disabled.stop("SIGTERM")).toBe(0);
    expect(
      loadedPackagesOf(disabled.output().stderr).filter((name) => name.startsWith("@opentelemetry/")),
    ).toEqual([]);
    // Both processes have exited: whatever they would have sent had arrived by then.
    expect(collector.exports).toEqual([]);
  });

  it("says on its error output, once, that a collector refuses the exports, without the endpoint's credentials", async () => {
    const collector = await receiver({ status: 400 });
    const project = await servedProject();
    const endpoint = collector.endpoint.replace("http://", "http://ingest:collector-password@");
    const served = await serve(project, {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    // Two runs, the second once the first's spans were sent (and refused): the failure is told once per signal.
    await runToTheEnd(served.address, project.key);
    await collector.waitFor("the first run's spans", hasPath("/v1/traces"));
    await runToTheEnd(served.address, project.key);
    expect(await served.stop("SIGTERM")).toBe(0);
    await collector.waitFor("refused exports of both signals", (exports) =>
      ["/v1/traces", "/v1/metrics"].every((path) => hasPath(path)(exports)),
    );
    const { stderr } = served.output();
    const told = stderr.split("\n").filter((line) => line.startsWith("charter serve: telemetry: exporting"));
    expect(told).toHaveLength(2);
    expect(told[0]).toContain(`exporting traces to ${collector.endpoint}/v1/traces failed`);
    expect(told[1]).toContain(`exporting metrics to ${collector.endpoint}/v1/metrics failed`);
    expect(stderr).not.toContain("collector-password");
    expect(collector.exports.filter((each) => each.path === "/v1/traces").length).toBeGreaterThan(1);
  });

  it("refuses an unsupported OTLP protocol at start-up, naming the variable", async () => {
    const project = await servedProject();
    const started = await charterProcess(["serve", "--port", "0", "--store", project.store], {
      cwd: project.directory,
      env: {
        HOME: project.directory,
        ...noTelemetry,
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      },
    });
    expect(started.exitCode).not.toBe(0);
    expect(started.stderr).toContain("OTEL_EXPORTER_OTLP_PROTOCOL");
    expect(started.stderr).toContain("CONFIGURATION_INVALID");
  });
});
