import { CharterError } from "../foundation/charter-error.js";

/** The longest correlation id accepted: room for a request id or a W3C traceparent, far below header limits. */
export const maxCorrelationIdLength = 256;
// Printable ASCII, spaces inside only: what every HTTP header can carry unchanged, since the id is sent as one.
const correlationIdPattern = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * Refuses a correlation id that could not travel as an HTTP header value (`x-correlation-id`, sent to REST
 * tools and remote MCP servers): empty, longer than `maxCorrelationIdLength`, with a line break, a control or a
 * non-ASCII character, or with leading or trailing spaces. Checked before the run starts, so that no tool call
 * fails on it later.
 */
export function checkCorrelationId(correlationId: string | undefined): void {
  if (correlationId === undefined) return;
  if (correlationId.length <= maxCorrelationIdLength && correlationIdPattern.test(correlationId)) return;
  throw new CharterError(
    "ARGUMENT_INVALID",
    `the correlation id must be 1 to ${maxCorrelationIdLength} printable ASCII characters without leading or trailing spaces (it is sent as the HTTP header x-correlation-id)`,
    { details: { argument: "correlationId", length: correlationId.length } },
  );
}
