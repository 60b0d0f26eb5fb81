/**
 * Where a run's correlation id travels to the tools it calls: the HTTP header on every request to a REST tool
 * and to a remote MCP server, and the `_meta` key of every MCP `tools/call` (every transport, stdio included).
 * The `_meta` key follows MCP's key rules: a prefix of one label (`charter`) and a slash, then the name; no
 * `modelcontextprotocol` or `mcp` label, which MCP reserves.
 */
export const correlationIdFields = Object.freeze({
  header: "x-correlation-id",
  metaKey: "charter/correlationId",
});

/**
 * `headers` with the correlation id added under its header, unless the configuration already sets that header
 * (in any case): a header configured on purpose is sent as configured.
 */
export function withCorrelationIdHeader(
  headers: Readonly<Record<string, string>>,
  correlationId: string | undefined,
): Record<string, string> {
  const name = correlationIdFields.header;
  if (correlationId === undefined || Object.keys(headers).some((key) => key.toLowerCase() === name)) {
    return { ...headers };
  }
  return { ...headers, [name]: correlationId };
}
