import { describe, expect, it } from "vitest";
import { runTraceIds } from "../../src/server/telemetry/run-trace-ids.js";
import {
  eventually,
  heldWriteWorkspace,
  pgBossTestDispatcher,
  postgresTestUrl,
  releasedAfterTest,
  runRequest,
  type ServerWorkspace,
  startWorkerProcess,
  type TestStore,
  testStoreOn,
} from "./execution-harness.js";
import { hasPath, spansOf } from "./otlp-json.js";
import { type OtlpReceiver, startOtlpReceiver } from "./otlp-receiver.js";

/** `charter worker` exporting its telemetry (OTLP/JSON) to the test's receiver under `serviceName`. */
function startTelemetryWorker(
  workspace: ServerWorkspace,
  testStore: TestStore,
  collector: OtlpReceiver,
  serviceName: string,
) {
  return startWorkerProcess(workspace, testStore, {
    environment: {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: undefined,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: serviceName,
      OTEL_SDK_DISABLED: undefined,
      // Nothing is sent on a timer: what arrives, the worker's SIGTERM drain sent.
      OTEL_BSP_SCHEDULE_DELAY: "600000",
      OTEL_METRIC_EXPORT_INTERVAL: "600000",
    },
  });
}

const callerTraceId = "0af7651916cd43dd8448eb211c80319c";
const callerSpanId = "b7ad6b7169203331";

describe.skipIf(postgresTestUrl === "")("charter worker's telemetry on PostgreSQL (pg-boss)", () => {
  it("a run drained by one worker and continued by another is one trace: the caller's, two invoke_agent spans from the two workers, the second linked to the first", async () => {
    const { workspace, writeHeld, releaseWrite } = await heldWriteWorkspace();
    const testStore = await testStoreOn("postgres", workspace.directory);
    const collector = releasedAfterTest(await startOtlpReceiver(), (receiver) => receiver.close());
    const dispatcher = await pgBossTestDispatcher(workspace, testStore);
    const first = startTelemetryWorker(workspace, testStore, collector, "charter-worker-one");
    // The caller's trace context travels with the request, through the queue, to whichever worker runs it.
    const request = runRequest({
      prompt: "Record one.",
      traceContext: { traceparent: `00-${callerTraceId}-${callerSpanId}-01` },
    });
    await dispatcher.dispatch(request);
    await writeHeld.opened;
    first.child.kill("SIGTERM");
    await eventually("the worker to start draining", () => first.output().includes("draining"));
    releaseWrite.open();
    expect(await first.exited).toBe(0);
    // The drained worker flushed its spans before it exited.
    const fromFirst = spansOf(await collector.waitFor("the first worker's spans", hasPath("/v1/traces")));
    const second = startTelemetryWorker(workspace, testStore, collector, "charter-worker-two");
    await dispatcher.whenSettled("acme", request.runId, new AbortController().signal);
    expect((await testStore.store.forTenant("acme").getRunRequest(request.runId))?.state).toBe("COMPLETED");
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    const spans = spansOf(
      await collector.waitFor("the second worker's spans", (exports) =>
        spansOf(exports).some((span) => span.resource["service.name"] === "charter-worker-two"),
      ),
    );
    const executions = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent");
    expect(executions.map((span) => span.resource["service.name"])).toEqual([
      "charter-worker-one",
      "charter-worker-two",
    ]);
    const [drained, continued] = executions as [(typeof executions)[0], (typeof executions)[0]];
    expect(fromFirst).toContainEqual(drained);
    for (const execution of executions) {
      expect(execution.traceId).toBe(callerTraceId);
      expect(execution.parentSpanId).toBe(callerSpanId);
      expect(execution.attributes["charter.run.id"]).toBe(request.runId);
    }
    expect(drained.spanId).toBe(runTraceIds(request.runId).firstSpanId);
    expect(drained.attributes).toMatchObject({
      "charter.execution.kind": "start",
      "charter.execution.status": "suspended",
      "charter.outcome": "INTERRUPTED",
    });
    expect(drained.attributes["charter.run.final_state"]).toBeUndefined();
    expect(continued.attributes).toMatchObject({
      "charter.execution.kind": "takeover",
      "charter.resumed": true,
      "charter.execution.status": "completed",
      "charter.run.final_state": "success",
    });
    expect(continued.links).toEqual([
      expect.objectContaining({ traceId: callerTraceId, spanId: drained.spanId }),
    ]);
    // The write ran once, under the first worker's span; the second only asked the model for the report.
    const writes = spans.filter((span) => span.attributes["gen_ai.tool.name"] === "rest__record");
    expect(writes.map((span) => [span.parentSpanId, span.attributes["charter.tool.status"]])).toEqual([
      [drained.spanId, "ok"],
    ]);
    expect(spans.filter((span) => span.parentSpanId === continued.spanId).map((span) => span.name)).toEqual([
      expect.stringMatching(/^chat /),
    ]);
  }, 90_000);
});
