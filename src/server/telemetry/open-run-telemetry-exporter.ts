import type { SecretRedactor } from "../../foundation/secret-redactor.js";
import type { RunTelemetryExporter } from "./run-telemetry-exporter.js";
import { telemetrySettings } from "./telemetry-settings.js";

/**
 * The OTLP exporter of a server process's runs when the environment names an endpoint, else null. OpenTelemetry's
 * packages are imported here only, and only when an endpoint is set: without one, starting the server loads none of
 * them (start-up is part of its performance) and nothing is exported.
 */
export async function openRunTelemetryExporter(
  environment: Readonly<Record<string, string | undefined>>,
  redactor: SecretRedactor,
  onError?: (error: unknown) => void,
): Promise<RunTelemetryExporter | null> {
  const settings = telemetrySettings(environment);
  if (settings === null) return null;
  const { createOtlpRunTelemetryExporter } = await import("./create-otlp-run-telemetry-exporter.js");
  return createOtlpRunTelemetryExporter(settings, redactor, onError);
}
