import { CharterError } from "../../foundation/charter-error.js";

/** The OTLP protocols Charter exports with: protobuf or JSON over HTTP. */
export type OtlpProtocol = "http/protobuf" | "http/json";

/** Where and how a server process exports its runs' traces and metrics (OTLP over HTTP). */
export interface TelemetrySettings {
  /** The full URL traces are posted to (`<endpoint>/v1/traces`), or null to export no traces. */
  readonly tracesUrl: string | null;
  /** The full URL metrics are posted to (`<endpoint>/v1/metrics`), or null to export no metrics. */
  readonly metricsUrl: string | null;
  readonly tracesProtocol: OtlpProtocol;
  readonly metricsProtocol: OtlpProtocol;
  /** Headers sent with every export (`OTEL_EXPORTER_OTLP_HEADERS`, then the signal's own). */
  readonly tracesHeaders: Readonly<Record<string, string>>;
  readonly metricsHeaders: Readonly<Record<string, string>>;
  /** `OTEL_SERVICE_NAME`, else `service.name` of `OTEL_RESOURCE_ATTRIBUTES`, else `charter`. */
  readonly serviceName: string;
  /** `OTEL_RESOURCE_ATTRIBUTES` (`deployment.environment=prod,...`): more attributes of the process's resource. */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  /** `OTEL_METRIC_EXPORT_INTERVAL` in milliseconds (default 60 000): how often metrics are sent. */
  readonly metricExportIntervalMilliseconds: number;
  /** `OTEL_BSP_SCHEDULE_DELAY` in milliseconds (default 5 000): how long ended spans wait to be sent in a batch. */
  readonly spanExportDelayMilliseconds: number;
}

const protocols: readonly OtlpProtocol[] = ["http/protobuf", "http/json"];
const defaultMetricExportInterval = 60_000;
const defaultSpanExportDelay = 5_000;

type Environment = Readonly<Record<string, string | undefined>>;

function nonEmpty(environment: Environment, name: string): string | undefined {
  const value = environment[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function nonEmptyText(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

function checkedUrl(name: string, value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return url.toString();
  } catch {
    // Answered below.
  }
  throw new CharterError(
    "CONFIGURATION_INVALID",
    `${name} must be an http:// or https:// URL, not '${value}'`,
    {
      details: { variable: name, value },
    },
  );
}

/** The signal's URL: its own endpoint as given, else the general endpoint with `v1/<signal>` appended. */
function signalUrl(environment: Environment, signal: "TRACES" | "METRICS"): string | null {
  const own = nonEmpty(environment, `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`);
  if (own !== undefined) return checkedUrl(`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`, own);
  const general = nonEmpty(environment, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (general === undefined) return null;
  const base = checkedUrl("OTEL_EXPORTER_OTLP_ENDPOINT", general);
  return `${base.endsWith("/") ? base : `${base}/`}v1/${signal.toLowerCase()}`;
}

function protocolOf(environment: Environment, signal: "TRACES" | "METRICS"): OtlpProtocol {
  const name = nonEmpty(environment, `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`)
    ? `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const value = nonEmpty(environment, name) ?? "http/protobuf";
  if ((protocols as readonly string[]).includes(value)) return value as OtlpProtocol;
  throw new CharterError(
    "CONFIGURATION_INVALID",
    `${name} '${value}' is not supported: Charter exports OTLP over HTTP, http/protobuf (the default) or http/json (for gRPC, put an OpenTelemetry Collector in between)`,
    { details: { variable: name, value, supported: [...protocols] } },
  );
}

/** `key1=value1,key2=value2`, each part URL-decoded, as the OTLP exporter specification writes headers. */
function headersOf(environment: Environment, name: string): Record<string, string> {
  const headers: Record<string, string> = {};
  const raw = nonEmpty(environment, name);
  if (raw === undefined) return headers;
  for (const pair of raw.split(",")) {
    const separator = pair.indexOf("=");
    const key = separator < 0 ? "" : pair.slice(0, separator).trim();
    if (key === "") {
      // The value may be a credential: the message names the variable, never the text.
      throw new CharterError(
        "CONFIGURATION_INVALID",
        `${name} must be a comma-separated list of key=value pairs (URL-encoded), as in api-key=abc,tenant=acme`,
        { details: { variable: name } },
      );
    }
    try {
      headers[decodeURIComponent(key)] = decodeURIComponent(pair.slice(separator + 1).trim());
    } catch {
      throw new CharterError("CONFIGURATION_INVALID", `${name} has a pair that is not valid URL encoding`, {
        details: { variable: name, key },
      });
    }
  }
  return headers;
}

function milliseconds(environment: Environment, name: string, fallback: number): number {
  const raw = nonEmpty(environment, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new CharterError(
      "CONFIGURATION_INVALID",
      `${name} must be a whole number of milliseconds (1 or more), not '${raw}'`,
      { details: { variable: name, value: raw } },
    );
  }
  return value;
}

/**
 * What the process environment says about exporting telemetry, by OpenTelemetry's own variables
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, the signal-specific `..._TRACES_ENDPOINT` and `..._METRICS_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`), or null when no endpoint is set
 * (or `OTEL_SDK_DISABLED=true`): then nothing is exported and no OpenTelemetry module is loaded.
 */
export function telemetrySettings(environment: Environment): TelemetrySettings | null {
  if (nonEmpty(environment, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return null;
  const tracesUrl = signalUrl(environment, "TRACES");
  const metricsUrl = signalUrl(environment, "METRICS");
  if (tracesUrl === null && metricsUrl === null) return null;
  const general = headersOf(environment, "OTEL_EXPORTER_OTLP_HEADERS");
  // The same key=value list, URL-decoded, as the resource specification writes it.
  const resourceAttributes = headersOf(environment, "OTEL_RESOURCE_ATTRIBUTES");
  return {
    tracesUrl,
    metricsUrl,
    tracesProtocol: protocolOf(environment, "TRACES"),
    metricsProtocol: protocolOf(environment, "METRICS"),
    tracesHeaders: { ...general, ...headersOf(environment, "OTEL_EXPORTER_OTLP_TRACES_HEADERS") },
    metricsHeaders: { ...general, ...headersOf(environment, "OTEL_EXPORTER_OTLP_METRICS_HEADERS") },
    serviceName:
      nonEmpty(environment, "OTEL_SERVICE_NAME") ??
      nonEmptyText(resourceAttributes["service.name"]) ??
      "charter",
    resourceAttributes,
    metricExportIntervalMilliseconds: milliseconds(
      environment,
      "OTEL_METRIC_EXPORT_INTERVAL",
      defaultMetricExportInterval,
    ),
    spanExportDelayMilliseconds: milliseconds(environment, "OTEL_BSP_SCHEDULE_DELAY", defaultSpanExportDelay),
  };
}
