import { type TraceContext, traceContextOf } from "./trace-context.js";

/** `{ traceContext }` for a run request when the HTTP request carries a valid W3C trace context, else nothing. */
export function traceContextField(headers: Readonly<Record<string, string | string[] | undefined>>): {
  readonly traceContext?: TraceContext;
} {
  const traceContext = traceContextOf(headers);
  return traceContext === null ? {} : { traceContext };
}
