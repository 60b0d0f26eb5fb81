import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { telemetrySettings } from "../../src/server/telemetry/telemetry-settings.js";
import { traceContextOf } from "../../src/server/telemetry/trace-context.js";

function refusal(environment: Record<string, string>): CharterError {
  try {
    telemetrySettings(environment);
  } catch (error) {
    if (CharterError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("telemetrySettings accepted it");
}

describe("telemetrySettings: OpenTelemetry's own environment variables", () => {
  it("is null without an endpoint (nothing exported), and with OTEL_SDK_DISABLED=true", () => {
    expect(telemetrySettings({})).toBeNull();
    expect(telemetrySettings({ OTEL_SERVICE_NAME: "x", OTEL_EXPORTER_OTLP_ENDPOINT: " " })).toBeNull();
    expect(
      telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" }),
    ).toBeNull();
  });

  it("appends v1/traces and v1/metrics to the general endpoint; a signal's own endpoint is used as given", () => {
    expect(telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toEqual({
      tracesUrl: "http://collector:4318/v1/traces",
      metricsUrl: "http://collector:4318/v1/metrics",
      tracesProtocol: "http/protobuf",
      metricsProtocol: "http/protobuf",
      tracesHeaders: {},
      metricsHeaders: {},
      serviceName: "charter",
      resourceAttributes: {},
      metricExportIntervalMilliseconds: 60_000,
      spanExportDelayMilliseconds: 5_000,
    });
    expect(
      telemetrySettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://otlp.example.com/prefix/",
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "https://metrics.example.com/ingest",
      }),
    ).toMatchObject({
      tracesUrl: "https://otlp.example.com/prefix/v1/traces",
      metricsUrl: "https://metrics.example.com/ingest",
    });
    // Only traces: no metrics are sent anywhere.
    expect(
      telemetrySettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://jaeger:4318/v1/traces" }),
    ).toMatchObject({
      tracesUrl: "http://jaeger:4318/v1/traces",
      metricsUrl: null,
    });
  });

  it("takes the protocol, the headers (URL-decoded, the signal's own over the general ones) and the service name", () => {
    expect(
      telemetrySettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/protobuf",
        OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%20b,tenant=acme",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "tenant=traces",
        OTEL_SERVICE_NAME: "charter-eu",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,service.name=ignored,team=a%2Cb",
        OTEL_BSP_SCHEDULE_DELAY: "1000",
      }),
    ).toMatchObject({
      resourceAttributes: { "deployment.environment": "prod", "service.name": "ignored", team: "a,b" },
      tracesProtocol: "http/json",
      metricsProtocol: "http/protobuf",
      tracesHeaders: { "api-key": "a b", tenant: "traces" },
      metricsHeaders: { "api-key": "a b", tenant: "acme" },
      serviceName: "charter-eu",
      spanExportDelayMilliseconds: 1000,
    });
  });

  it("takes the service name from OTEL_RESOURCE_ATTRIBUTES when OTEL_SERVICE_NAME is not set", () => {
    expect(
      telemetrySettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_RESOURCE_ATTRIBUTES: "service.name=charter-eu-1",
      })?.serviceName,
    ).toBe("charter-eu-1");
  });

  it("refuses what it cannot honour with CONFIGURATION_INVALID naming the variable (never a header's value)", () => {
    const grpc = refusal({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    });
    expect(grpc.code).toBe("CONFIGURATION_INVALID");
    expect(grpc.details).toEqual({
      variable: "OTEL_EXPORTER_OTLP_PROTOCOL",
      value: "grpc",
      supported: ["http/protobuf", "http/json"],
    });
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }).details).toMatchObject({
      variable: "OTEL_EXPORTER_OTLP_ENDPOINT",
    });
    const headers = refusal({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "sk-secret",
    });
    expect(headers.details).toEqual({ variable: "OTEL_EXPORTER_OTLP_HEADERS" });
    expect(headers.message).not.toContain("sk-secret");
    expect(
      refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_METRIC_EXPORT_INTERVAL: "soon" }).details,
    ).toMatchObject({ variable: "OTEL_METRIC_EXPORT_INTERVAL" });
  });
});

describe("traceContextOf: the W3C traceparent a caller sends", () => {
  const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

  it("keeps a valid traceparent and its tracestate", () => {
    expect(traceContextOf({ traceparent: valid })).toEqual({ traceparent: valid });
    expect(traceContextOf({ traceparent: valid, tracestate: "vendor=abc" })).toEqual({
      traceparent: valid,
      tracestate: "vendor=abc",
    });
    // A later version may add fields: the four known ones are kept.
    expect(traceContextOf({ traceparent: `cc-${valid.slice(3)}-extra` })).toEqual({
      traceparent: `cc-${valid.slice(3)}`,
    });
  });

  it("ignores an invalid one, as the specification says (the run starts a trace of its own)", () => {
    for (const traceparent of [
      "00-not-a-trace-01",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      `${valid}-extra`,
      valid.toUpperCase(),
    ]) {
      expect(traceContextOf({ traceparent }), traceparent).toBeNull();
    }
    expect(traceContextOf({})).toBeNull();
    // Sent twice, it is ambiguous.
    expect(traceContextOf({ traceparent: [valid, valid] })).toBeNull();
  });
});
