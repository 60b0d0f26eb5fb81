import { correlationIdFields } from "../tools/sources/correlation-id-fields.js";

type Fetch = typeof globalThis.fetch;

/** The header the run's correlation id travels in, to model endpoints as to REST tools and remote MCP servers. */
const correlationIdHeader = correlationIdFields.header;

/**
 * A fetch that sends the run's correlation id to the model endpoint with every request (`x-correlation-id`), so
 * that the provider's logs can be joined with the run's. A header of that name the provider's configuration sets
 * wins, as it does for tools.
 */
export function withCorrelationHeader(correlationId: string, fetch: Fetch = globalThis.fetch): Fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    if (headers.has(correlationIdHeader)) return fetch(input, init);
    headers.set(correlationIdHeader, correlationId);
    return fetch(input, { ...init, headers });
  };
}
