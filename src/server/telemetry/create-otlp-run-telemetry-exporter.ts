import {
  type Context,
  defaultTextMapGetter,
  type Link,
  ROOT_CONTEXT,
  SpanKind,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from "@opentelemetry/sdk-metrics";
import {
  BatchSpanProcessor,
  type IdGenerator,
  RandomIdGenerator,
  type SpanExporter,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { SecretRedactor } from "../../foundation/secret-redactor.js";
import { genAiInstruments } from "./gen-ai-instruments.js";
import { reportExportFailures } from "./report-export-failures.js";
import { createRunExecutionSpans } from "./run-execution-spans.js";
import type { RunTelemetryExporter } from "./run-telemetry-exporter.js";
import { runTraceIds } from "./run-trace-ids.js";
import type { OtlpProtocol, TelemetrySettings } from "./telemetry-settings.js";

const instrumentationName = "charter";

/**
 * Hands out the ids of the next span started, once, and random ids otherwise: the first execution of a run gets the
 * span id (and, without a caller's trace, the trace id) derived from its run id, so that its continuations can find
 * it. Span starts are synchronous, so the ids set just before one are the ones it takes.
 */
function runIdGenerator() {
  const random = new RandomIdGenerator();
  let nextTraceId: string | null = null;
  let nextSpanId: string | null = null;
  const generator: IdGenerator = {
    generateTraceId() {
      const id = nextTraceId ?? random.generateTraceId();
      nextTraceId = null;
      return id;
    },
    generateSpanId() {
      const id = nextSpanId ?? random.generateSpanId();
      nextSpanId = null;
      return id;
    },
  };
  return {
    generator,
    next(ids: { readonly traceId: string | null; readonly spanId: string | null }) {
      nextTraceId = ids.traceId;
      nextSpanId = ids.spanId;
    },
  };
}

async function spanExporter(protocol: OtlpProtocol, url: string, headers: Record<string, string>) {
  // Only the exporter of the protocol in use is loaded.
  if (protocol === "http/json") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    return new OTLPTraceExporter({ url, headers });
  }
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter({ url, headers });
}

async function metricExporter(
  protocol: OtlpProtocol,
  url: string,
  headers: Record<string, string>,
): Promise<PushMetricExporter> {
  if (protocol === "http/json") {
    const { OTLPMetricExporter } = await import("@opentelemetry/exporter-metrics-otlp-http");
    return new OTLPMetricExporter({ url, headers });
  }
  const { OTLPMetricExporter } = await import("@opentelemetry/exporter-metrics-otlp-proto");
  return new OTLPMetricExporter({ url, headers });
}

/** Wall-clock milliseconds with the monotonic clock's precision. */
function now(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * The OpenTelemetry SDK set up for a server process: a tracer provider with a batch processor and an OTLP/HTTP span
 * exporter, a meter provider with a periodic OTLP/HTTP metric reader, both under one resource (`service.name`), and
 * neither registered globally (the process's own instrumentation, if any, is left alone).
 *
 * Trace continuity: a run's first execution is the span whose id derives from the run id, parented by the
 * caller's `traceparent` when it sent one (else a root span whose trace id derives from the run id). Each
 * continuation (after an approval, a takeover from a dead worker, a drain) is a new `invoke_agent` span in the same
 * trace, under the same parent, linked to the first execution's span: a trace shows every execution of a run,
 * whichever worker ran it, with nothing stored for telemetry beside the request.
 */
export async function createOtlpRunTelemetryExporter(
  settings: TelemetrySettings,
  redactor: SecretRedactor,
  onError: (error: unknown) => void = () => {},
): Promise<RunTelemetryExporter> {
  const resource = defaultResource().merge(
    resourceFromAttributes({ ...settings.resourceAttributes, "service.name": settings.serviceName }),
  );
  const ids = runIdGenerator();
  const spanExporters: SpanExporter[] =
    settings.tracesUrl === null
      ? []
      : [
          reportExportFailures(
            await spanExporter(settings.tracesProtocol, settings.tracesUrl, { ...settings.tracesHeaders }),
            "traces",
            settings.tracesUrl,
            redactor,
            onError,
          ),
        ];
  const tracerProvider = new TracerProvider({
    resource,
    idGenerator: ids.generator,
    spanProcessors: spanExporters.map(
      (exporter) =>
        new BatchSpanProcessor({ exporter, scheduledDelayMillis: settings.spanExportDelayMilliseconds }),
    ),
  });
  const readers =
    settings.metricsUrl === null
      ? []
      : [
          new PeriodicExportingMetricReader({
            exporter: reportExportFailures(
              await metricExporter(settings.metricsProtocol, settings.metricsUrl, {
                ...settings.metricsHeaders,
              }),
              "metrics",
              settings.metricsUrl,
              redactor,
              onError,
            ),
            exportIntervalMillis: settings.metricExportIntervalMilliseconds,
          }),
        ];
  const meterProvider = new MeterProvider({ resource, readers });
  const tracer = tracerProvider.getTracer(instrumentationName);
  const instruments = genAiInstruments(meterProvider.getMeter(instrumentationName));
  const propagator = new W3CTraceContextPropagator();

  return {
    startExecution(request, kind) {
      const derived = runTraceIds(request.runId);
      const callerContext: Context =
        request.traceContext === undefined
          ? ROOT_CONTEXT
          : propagator.extract(ROOT_CONTEXT, { ...request.traceContext }, defaultTextMapGetter);
      const caller = trace.getSpanContext(callerContext);
      const links: Link[] =
        kind === "start"
          ? []
          : [
              {
                context: {
                  traceId: caller?.traceId ?? derived.traceId,
                  spanId: derived.firstSpanId,
                  traceFlags: TraceFlags.SAMPLED,
                },
                attributes: { "charter.link": "first_execution" },
              },
            ];
      ids.next({
        traceId: caller === undefined ? derived.traceId : null,
        spanId: kind === "start" ? derived.firstSpanId : null,
      });
      const text = (value: string) => redactor.redactString(value);
      const runSpan = tracer.startSpan(
        `invoke_agent ${text(request.agent)}`,
        {
          kind: SpanKind.INTERNAL,
          startTime: now(),
          links,
          attributes: {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": text(request.agent),
            ...(request.conversationId !== null
              ? {
                  "gen_ai.conversation.id": text(request.conversationId),
                  "charter.conversation.id": text(request.conversationId),
                }
              : {}),
            "charter.run.id": text(request.runId),
            "charter.tenant.id": text(request.tenantId),
            ...(request.userId !== null ? { "charter.user.id": text(request.userId) } : {}),
            "charter.correlation.id": text(request.correlationId),
            "charter.request.id": text(request.requestId),
            "charter.role": request.role,
            "charter.execution.kind": kind,
            "charter.resumed": kind !== "start",
          },
        },
        callerContext,
      );
      // Whatever the span did not take (an unsampled caller's trace starts no span) is not left for the next one.
      ids.next({ traceId: null, spanId: null });
      return createRunExecutionSpans({
        tracer,
        instruments,
        request,
        runSpan,
        parentContext: callerContext,
        redactor,
        now,
      });
    },
    async shutdown() {
      // Both flush what they hold before they stop: the spans of runs that ended during the drain, the metrics.
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}
