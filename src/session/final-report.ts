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

/**
 * The report of a run that completed without one from the model (a synthesis turn forced by
 * `force_synthesis_at_ratio` that gave none): `status: success`, since the outcome is a completion, with
 * `source: synthetic` and the reason in `metadata`, so nobody mistakes it for the model's words.
 */
export function syntheticCompletionReport(
  format: OutputFormat,
  reason: string,
  now: number,
  extra: { readonly outcome: string; readonly turns: number; readonly tools_used: readonly string[] },
): FinalReport {
  const tools = extra.tools_used.length > 0 ? extra.tools_used.join(", ") : "none";
  const content = `The model gave no final report on the synthesis turn (the context passed force_synthesis_at_ratio) after ${extra.turns} turns; tools used: ${tools}.`;
  return {
    status: "success",
    source: "synthetic",
    format,
    ...(format === "json" ? { content_json: { reason, message: content } } : { content }),
    metadata: { reason, ...extra },
    ts: new Date(now).toISOString(),
  };
}

/** The text a final report shows a person (stdout of `charter run`). */
export function finalReportText(report: FinalReport): string {
  if (report.content !== undefined) return report.content;
  return JSON.stringify(report.content_json, null, 2);
}
