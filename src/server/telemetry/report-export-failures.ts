import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { SecretRedactor } from "../../foundation/secret-redactor.js";

/** An OTLP exporter of either signal: what is wrapped is its `export`. */
interface Exporter<Items> {
  export(items: Items, resultCallback: (result: ExportResult) => void): void;
}

/** The URL without credentials a user may have written into it (`https://user:key@host`). */
function shownUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = "";
  parsed.password = "";
  return parsed.toString();
}

/**
 * Tells `report` when an export of `signal` fails, once per run of failures (until an export succeeds again), so
 * that a collector that is down or refuses the data is visible on the process's error output without one line per
 * batch. The SDK itself only logs through OpenTelemetry's diagnostic logger, which is silent unless configured.
 */
export function reportExportFailures<Items, Wrapped extends Exporter<Items>>(
  exporter: Wrapped,
  signal: "traces" | "metrics",
  url: string,
  redactor: SecretRedactor,
  report: (error: Error) => void,
): Wrapped {
  const exportItems = exporter.export.bind(exporter);
  let failing = false;
  exporter.export = (items: Items, resultCallback: (result: ExportResult) => void) => {
    exportItems(items, (result) => {
      if (result.code === ExportResultCode.SUCCESS) failing = false;
      else if (!failing) {
        failing = true;
        const reason = redactor.redactString(result.error?.message ?? "the export failed");
        report(
          new Error(
            `telemetry: exporting ${signal} to ${shownUrl(url)} failed (${reason}); further failures are not reported until an export succeeds`,
          ),
        );
      }
      resultCallback(result);
    });
  };
  return exporter;
}
