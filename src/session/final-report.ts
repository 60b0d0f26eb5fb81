import type { OutputFormat } from "../contract/execution-contract.js";

/**
 * The final report (seed 000 §6). `status` and `source` are set by the runtime from how the report came
 * about, never by the model; the model provides only `content`/`content_json` and optional `metadata`.
 */
/** The name of the built-in tool through which the model hands in its report. */
export const finalReportToolName = "final_report";

export type FinalReportSource = "tool" | "text_fallback" | "synthetic";

export interface FinalReport {
  readonly status: "success" | "failure";
  readonly source: FinalReportSource;
  readonly format: OutputFormat;
  readonly content?: string;
  readonly content_json?: unknown;
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** ISO timestamp. */
  readonly ts: string;
}

export function syntheticFailureReport(
  format: OutputFormat,
  reason: string,
  content: string,
  now: number,
  extra: Record<string, unknown> = {},
): FinalReport {
  return {
    status: "failure",
    source: "synthetic",
    format,
    ...(format === "json" ? { content_json: { error: reason, message: content } } : { content }),
    metadata: { reason, ...extra },
    ts: new Date(now).toISOString(),
  };
}

/** The text a final report shows a person (stdout of `charter run`). */
export function finalReportText(report: FinalReport): string {
  if (report.content !== undefined) return report.content;
  return JSON.stringify(report.content_json, null, 2);
}
