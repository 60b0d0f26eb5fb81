import { createHash } from "node:crypto";

/**
 * A run's trace ids, derived from its run id alone: every execution of the run (its start, a continuation after an
 * approval, a takeover by another worker after a crash) finds the same ones without anything stored beside the
 * request. `traceId` is the run's trace when the caller sent no trace context; `firstSpanId` is the span id of the
 * run's first execution, which each continuation links to.
 */
export function runTraceIds(runId: string): { readonly traceId: string; readonly firstSpanId: string } {
  const digest = createHash("sha256").update(`charter-run-trace\u0000${runId}`, "utf8").digest("hex");
  // An all-zero id is invalid in W3C Trace Context; a digest with 32 (or 16) leading zero digits is not a concern.
  return { traceId: digest.slice(0, 32), firstSpanId: digest.slice(32, 48) };
}
