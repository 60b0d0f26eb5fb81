import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport, SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { withCorrelationIdHeader } from "./correlation-id-fields.js";
import { ExitObservingStdioTransport } from "./exit-observing-stdio-transport.js";
import {
  installMcpClientFeatures,
  type McpClientFeatures,
  mcpClientCapabilities,
} from "./mcp-client-features.js";
import type { McpServerDefinition } from "./mcp-server-definition.js";
import { createObservedFetch, type ObservedFetch } from "./observed-fetch.js";

/**
 * One MCP session: an SDK client over one transport. A session is used until it is lost (its transport
 * closed, or its SSE stream failed) and is then replaced, never revived.
 */
export interface McpSession {
  readonly client: Client;
  readonly transport: Transport;
  /** The stdio transport, for the process's exit and stderr; `null` for remote servers. */
  readonly stdio: ExitObservingStdioTransport | null;
  /** The fetch of a remote transport, with why its last event stream failed to open; `null` for stdio. */
  readonly fetch: ObservedFetch | null;
  /** Set when the session can no longer be used, with what ended it. */
  lost: { readonly error: unknown } | null;
  /** Set when Charter itself closed the session: its closing is then not a failure. */
  retired: boolean;
}

const clientInfo = { name: "charter", version: "0.1.0" };

// The SDK's Streamable HTTP transport re-opens its optional server-to-client stream on its own timers.
// Charter reconnects sessions itself (with the runtime's clock) and needs no server notifications, so the
// transport's own retries are turned off.
const noStreamReconnection = {
  maxRetries: 0,
  initialReconnectionDelay: 1000,
  maxReconnectionDelay: 1000,
  reconnectionDelayGrowFactor: 1,
};

function transportFor(
  definition: McpServerDefinition,
  cwd: string | undefined,
  fetch: ObservedFetch | null,
  correlationId: string | undefined,
): Transport {
  switch (definition.type) {
    case "stdio": {
      const directory = definition.cwd ?? cwd;
      return new ExitObservingStdioTransport({
        command: definition.command,
        args: [...(definition.args ?? [])],
        env: { ...definition.env },
        ...(directory == null ? {} : { cwd: directory }),
      });
    }
    case "http":
      return new StreamableHTTPClientTransport(new URL(definition.url), {
        requestInit: { headers: withCorrelationIdHeader(definition.headers ?? {}, correlationId) },
        ...(fetch === null ? {} : { fetch }),
        reconnectionOptions: noStreamReconnection,
      });
    case "sse":
      // The SDK sends these headers with the event stream's GET as well as with every POST.
      return new SSEClientTransport(new URL(definition.url), {
        requestInit: { headers: withCorrelationIdHeader(definition.headers ?? {}, correlationId) },
        ...(fetch === null ? {} : { fetch }),
      });
  }
}

/**
 * Builds a session, not yet connected: `client.connect(session.transport)` starts it. `onLost` is called once
 * when the session ends without Charter closing it.
 */
export function createMcpSession(
  definition: McpServerDefinition,
  options: {
    readonly cwd?: string;
    readonly onLost: (session: McpSession) => void;
    readonly traceMessage?: McpMessageTrace;
    /** Roots and sampling; absent: the run's working directory as the only root, no sampling. */
    readonly features?: McpClientFeatures;
    /** The run's correlation id: a remote server gets it as `x-correlation-id` with every HTTP request. */
    readonly correlationId?: string;
  },
): McpSession {
  const fetch = definition.type === "stdio" ? null : createObservedFetch(definition.type);
  const transport = transportFor(definition, options.cwd, fetch, options.correlationId);
  if (options.traceMessage !== undefined) traceTransport(transport, options.traceMessage);
  const cwd = options.cwd ?? process.cwd();
  const features = options.features ?? { roots: [cwd] };
  const client = new Client(clientInfo, { capabilities: mcpClientCapabilities(features) });
  installMcpClientFeatures(client, features, cwd);
  const session: McpSession = {
    client,
    transport,
    stdio: transport instanceof ExitObservingStdioTransport ? transport : null,
    fetch,
    lost: null,
    retired: false,
  };
  const markLost = (error: unknown) => {
    if (session.lost !== null || session.retired) return;
    session.lost = { error };
    options.onLost(session);
  };
  client.onclose = () => markLost(null);
  client.onerror = (error) => {
    // Every other transport error also fails the request it belongs to, which is where it is handled. A failed
    // SSE stream is different: it is the only way answers arrive, and the SDK's event source would silently
    // reconnect to a new, uninitialised session. The session is closed instead, and replaced on the next call.
    if (definition.type === "sse" && error instanceof SseError) {
      markLost(error);
      void client.close().catch(() => {});
    }
  };
  return session;
}

/** `--trace-mcp`: called with every JSON-RPC message a session sends or receives, as it goes. */
export type McpMessageTrace = (direction: "send" | "receive", message: unknown) => void;

/**
 * Reports each message through the transport's own `send` and `onmessage` (which the SDK's client sets when it
 * connects), on the instance itself, so that the transport keeps its class and behaves exactly as before.
 */
function traceTransport(transport: Transport, trace: McpMessageTrace): void {
  const send = transport.send.bind(transport);
  transport.send = (message, sendOptions) => {
    trace("send", message);
    return send(message, sendOptions);
  };
  let handler: Transport["onmessage"];
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    get: () => handler,
    set: (next: Transport["onmessage"]) => {
      handler =
        next === undefined
          ? undefined
          : (message, extra) => {
              trace("receive", message);
              next(message, extra);
            };
    },
  });
}

const sessionTerminationTimeoutMs = 1000;

/**
 * Closes a session on purpose; never rejects. With `terminate`, a Streamable HTTP session that still works is
 * first ended on the server too (the spec's DELETE), briefly and best effort, so that the server may free it.
 */
export async function retireMcpSession(
  session: McpSession | null,
  options: { readonly terminate?: boolean } = {},
): Promise<void> {
  if (session === null || session.retired) return;
  session.retired = true;
  const { transport } = session;
  if (
    options.terminate === true &&
    session.lost === null &&
    transport instanceof StreamableHTTPClientTransport
  ) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      transport.terminateSession().catch(() => {}),
      new Promise((resolve) => {
        timer = setTimeout(resolve, sessionTerminationTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }
  await session.client.close().catch(() => {});
}
