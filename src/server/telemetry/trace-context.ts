/** A caller's W3C trace context, as it sent it (validated): what a run's spans are parented by. */
export interface TraceContext {
  /** `00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>`. */
  readonly traceparent: string;
  /** The vendors' state that travels with it, kept as sent (at most 512 characters). */
  readonly tracestate?: string;
}

const traceparentPattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[^\s]*)?$/;
const allZeros = /^0+$/;
const maximumTracestateLength = 512;

/**
 * The trace context of a request's `traceparent` and `tracestate` headers, or null when it has none or an invalid
 * one. The W3C Trace Context specification has a receiver ignore an invalid `traceparent` (a new trace starts)
 * rather than refuse the request, so a caller's tracing mistake never costs it its run.
 */
export function traceContextOf(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): TraceContext | null {
  const traceparent = headers.traceparent;
  // Sent twice, it is ambiguous: ignored as invalid.
  if (typeof traceparent !== "string") return null;
  const match = traceparentPattern.exec(traceparent.trim());
  if (match === null) return null;
  const [, version, traceId, parentId, , rest] = match;
  // Version ff is forbidden; version 00 has exactly four parts (later versions may add more).
  if (version === "ff" || (version === "00" && rest !== undefined)) return null;
  if (allZeros.test(traceId ?? "") || allZeros.test(parentId ?? "")) return null;
  const tracestate = headers.tracestate;
  const state =
    typeof tracestate === "string" && tracestate.length > 0 && tracestate.length <= maximumTracestateLength
      ? tracestate
      : undefined;
  return {
    traceparent: match[0].slice(0, 55),
    ...(state !== undefined ? { tracestate: state } : {}),
  };
}
