import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { systemCodeOf } from "./system-code-of.js";

/**
 * A failed HTTP exchange with an MCP server, as structured facts. The SDK's own errors carry some of these
 * only in their message text, so the transports are given a fetch that raises this instead.
 */
export class McpHttpFailure extends Error {
  /**
   * `unreachable`: no connection was made, so the request was never delivered. `connection_lost`: the
   * connection broke after it was made. `session_expired`: HTTP 404 to a request bound to a session.
   * `http_status`: any other error status.
   */
  readonly kind: "unreachable" | "connection_lost" | "session_expired" | "http_status";
  readonly httpStatus: number | null;
  readonly systemCode: string | null;

  constructor(
    kind: McpHttpFailure["kind"],
    message: string,
    facts: { httpStatus?: number; systemCode?: string | null; cause?: unknown } = {},
  ) {
    super(message, facts.cause === undefined ? undefined : { cause: facts.cause });
    this.name = "McpHttpFailure";
    this.kind = kind;
    this.httpStatus = facts.httpStatus ?? null;
    this.systemCode = facts.systemCode ?? null;
  }
}

/** Error codes of a connection that was never established: whatever was sent did not arrive. */
const notConnectedCodes = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
]);

const maxBodyExcerpt = 300;

/**
 * A fetch for the SDK's transports that also keeps why the last attempt to open an event stream (a GET)
 * failed: the SSE client's event source reports such failures without their cause.
 */
export type ObservedFetch = FetchLike & { lastStreamFailure: McpHttpFailure | null };

/**
 * The fetch given to the SDK's HTTP transports. A network failure becomes an `McpHttpFailure` saying whether a
 * connection was ever made; an error status to a POST (a JSON-RPC message) becomes one carrying the status.
 * A 404 to a POST bound to a session (the `Mcp-Session-Id` header of Streamable HTTP, or any POST of the SSE
 * transport, whose endpoint names its session) means the server has forgotten the session.
 */
export function createObservedFetch(type: "http" | "sse"): ObservedFetch {
  const observed: ObservedFetch = Object.assign(
    async (url: string | URL, init?: RequestInit): Promise<Response> => {
      const opensStream = (init?.method ?? "GET") === "GET";
      if (opensStream) observed.lastStreamFailure = null;
      let response: Response;
      try {
        response = await fetch(url, init);
      } catch (error) {
        if (init?.signal?.aborted === true) throw error;
        const systemCode = systemCodeOf(error);
        const kind =
          systemCode !== null && notConnectedCodes.has(systemCode) ? "unreachable" : "connection_lost";
        const what = kind === "unreachable" ? "cannot connect" : "the connection was lost";
        const failure = new McpHttpFailure(kind, `${what} (${systemCode ?? "network error"})`, {
          systemCode,
          cause: error,
        });
        if (opensStream) observed.lastStreamFailure = failure;
        throw failure;
      }
      return init?.method === "POST" && !response.ok ? rejectPost(type, init, response) : response;
    },
    { lastStreamFailure: null },
  );
  return observed;
}

async function rejectPost(type: "http" | "sse", init: RequestInit, response: Response): Promise<never> {
  const body = await response.text().catch(() => "");
  const sessionBound = type === "sse" || new Headers(init.headers).has("mcp-session-id");
  const kind = response.status === 404 && sessionBound ? "session_expired" : "http_status";
  const excerpt = body.trim().slice(0, maxBodyExcerpt);
  throw new McpHttpFailure(kind, `HTTP ${response.status}${excerpt === "" ? "" : `: ${excerpt}`}`, {
    httpStatus: response.status,
  });
}
