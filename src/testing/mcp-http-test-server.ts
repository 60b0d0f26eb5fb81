import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpHttpTestSessionServer, type ExecutedMcpToolCall } from "./mcp-http-test-session-server.js";

export type { ExecutedMcpToolCall } from "./mcp-http-test-session-server.js";

export interface McpHttpTestServerOptions {
  /** When set, every request must carry exactly this `Authorization` header, or is answered 401. */
  readonly requiredAuthorization?: string;
}

/** One HTTP request the server received, with the JSON-RPC method it carried (if it was a POST). */
export interface RecordedMcpHttpRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The `Mcp-Session-Id` header (Streamable HTTP) or `sessionId` query parameter (SSE). */
  readonly sessionId: string | null;
  readonly rpcMethod: string | null;
}

export interface McpHttpTestServer {
  /** The Streamable HTTP endpoint: `http://127.0.0.1:<port>/mcp`. */
  readonly streamableHttpUrl: string;
  /** The HTTP+SSE endpoint: `http://127.0.0.1:<port>/sse` (messages go to `/messages`). */
  readonly sseUrl: string;
  readonly requests: readonly RecordedMcpHttpRequest[];
  readonly executedCalls: readonly ExecutedMcpToolCall[];
  /** Sessions currently open, both transports together. */
  sessionCount(): number;
  /** Forgets every session, as a restarted server behind a load balancer would, keeping connections open. */
  forgetSessions(): Promise<void>;
  /** Stops (closing every connection) and listens again on the same port, with no sessions: a restart. */
  restart(): Promise<void>;
  /** Stops for good: connections are refused from now on. */
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function headersOf(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function rpcMethodOf(body: unknown): string | null {
  const first = Array.isArray(body) ? body[0] : body;
  if (typeof first !== "object" || first === null) return null;
  const method = (first as { method?: unknown }).method;
  return typeof method === "string" ? method : null;
}

/** The tool a `tools/call` message names, or null. */
function calledToolOf(body: unknown): string | null {
  if (rpcMethodOf(body) !== "tools/call") return null;
  const params = (body as { params?: { name?: unknown } }).params;
  return typeof params?.name === "string" ? params.name : null;
}

/**
 * A real MCP server on 127.0.0.1 (port 0) speaking both HTTP transports through the official SDK:
 * Streamable HTTP at `/mcp` (stateful, with deterministic session ids) and HTTP+SSE at `/sse` and
 * `/messages`. It records every request and every tool it executed, and can forget its sessions, restart on
 * the same port, or go away, for tests of reconnection and health. Calling `vanish` or `vanish_read_only`
 * logs the call, then drops the connection without an answer.
 */
export async function startMcpHttpTestServer(
  options: McpHttpTestServerOptions = {},
): Promise<McpHttpTestServer> {
  const requests: RecordedMcpHttpRequest[] = [];
  const executedCalls: ExecutedMcpToolCall[] = [];
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();
  let generation = 1;
  let sessionCounter = 0;

  async function handleStreamable(
    request: IncomingMessage,
    response: ServerResponse,
    sessionId: string | null,
    body: unknown,
  ): Promise<void> {
    let transport = sessionId === null ? undefined : streamable.get(sessionId);
    if (sessionId !== null && transport === undefined) {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(
        JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }),
      );
      return;
    }
    if (transport === undefined) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => `session-${generation}-${++sessionCounter}`,
        onsessioninitialized: (id) => {
          streamable.set(id, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId !== undefined) streamable.delete(created.sessionId);
      };
      await createMcpHttpTestSessionServer(executedCalls).connect(created);
      transport = created;
    }
    await transport.handleRequest(request, response, body);
  }

  async function handleSseStream(response: ServerResponse): Promise<void> {
    const transport = new SSEServerTransport("/messages", response);
    sse.set(transport.sessionId, transport);
    response.on("close", () => sse.delete(transport.sessionId));
    await createMcpHttpTestSessionServer(executedCalls).connect(transport);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const headers = headersOf(request);
    const rawBody = request.method === "POST" ? await readBody(request) : "";
    let body: unknown;
    try {
      body = rawBody === "" ? undefined : JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    const sessionId = headers["mcp-session-id"] ?? url.searchParams.get("sessionId");
    requests.push({
      method: request.method ?? "",
      path: url.pathname,
      headers,
      sessionId,
      rpcMethod: rpcMethodOf(body),
    });
    if (
      options.requiredAuthorization !== undefined &&
      headers.authorization !== options.requiredAuthorization
    ) {
      response.writeHead(401, { "content-type": "text/plain" }).end("unauthorized");
      return;
    }
    const calledTool = calledToolOf(body);
    if (calledTool === "vanish" || calledTool === "vanish_read_only") {
      // The call "ran", then the server went down before answering: the client cannot know which happened.
      executedCalls.push({ tool: calledTool, arguments: {} });
      request.socket.destroy();
      return;
    }
    if (url.pathname === "/mcp") return handleStreamable(request, response, sessionId, body);
    if (url.pathname === "/sse" && request.method === "GET") return handleSseStream(response);
    if (url.pathname === "/messages" && request.method === "POST") {
      const transport = sessionId === null ? undefined : sse.get(sessionId);
      if (transport === undefined) {
        response.writeHead(404, { "content-type": "text/plain" }).end("unknown session");
        return;
      }
      return transport.handlePostMessage(request, response, body);
    }
    response.writeHead(404, { "content-type": "text/plain" }).end("not found");
  }

  function listener(request: IncomingMessage, response: ServerResponse): void {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain" });
      response.end(String(error));
    });
  }

  async function listen(port: number): Promise<Server> {
    const server = createServer(listener);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    return server;
  }

  async function dropSessions(): Promise<void> {
    const open = [...streamable.values(), ...sse.values()];
    streamable.clear();
    sse.clear();
    await Promise.allSettled(open.map((transport) => transport.close()));
  }

  async function stop(server: Server): Promise<void> {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await dropSessions();
    await closed;
  }

  let server: Server | null = await listen(0);
  const port = (server.address() as AddressInfo).port;

  return {
    streamableHttpUrl: `http://127.0.0.1:${port}/mcp`,
    sseUrl: `http://127.0.0.1:${port}/sse`,
    requests,
    executedCalls,
    sessionCount: () => streamable.size + sse.size,
    forgetSessions: dropSessions,
    async restart() {
      if (server !== null) await stop(server);
      generation++;
      server = await listen(port);
    },
    async close() {
      if (server === null) return;
      const stopping = server;
      server = null;
      await stop(stopping);
    },
  };
}
