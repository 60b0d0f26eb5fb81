import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as the server received it. */
export interface RecordedRestRequest {
  readonly method: string;
  /** The path exactly as sent, percent-encoding included. */
  readonly path: string;
  /** Decoded query parameters; a repeated one is a list. */
  readonly query: Readonly<Record<string, string | readonly string[]>>;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as text ("" when there was none). */
  readonly body: string;
}

export interface RestTestResponse {
  /** Default 200. */
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** A string or bytes are sent as they are; anything else as JSON (with a JSON content type). */
  readonly body?: unknown;
}

export type RestTestHandler = (request: RecordedRestRequest) => RestTestResponse | Promise<RestTestResponse>;

export interface RestTestServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  readonly requests: readonly RecordedRestRequest[];
  /** Replaces how the server answers from now on. */
  respondWith(handler: RestTestHandler): void;
  close(): Promise<void>;
}

/** The default answer: 200 with JSON describing the request, so a test can see what arrived. */
const echoRequest: RestTestHandler = (request) => ({
  body: { method: request.method, path: request.path, query: request.query, body: request.body },
});

function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? (values[0] as string) : values;
  }
  return query;
}

async function record(request: IncomingMessage): Promise<RecordedRestRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return Object.freeze({
    method: request.method ?? "",
    path: (request.url ?? "/").split("?")[0] ?? "/",
    query: queryOf(url),
    headers,
    body: Buffer.concat(chunks).toString("utf8"),
  });
}

function send(response: ServerResponse, answer: RestTestResponse): void {
  const headers: Record<string, string> = { ...answer.headers };
  let body: string | Buffer = "";
  if (typeof answer.body === "string" || Buffer.isBuffer(answer.body)) {
    body = answer.body;
  } else if (answer.body !== undefined) {
    body = JSON.stringify(answer.body);
    headers["content-type"] ??= "application/json";
  }
  response.writeHead(answer.status ?? 200, headers);
  response.end(body);
}

/**
 * A real HTTP server on 127.0.0.1 (port 0) for REST tool tests: it records every request (method, raw path,
 * query, headers, body) and answers with the current handler (by default, JSON describing the request).
 */
export async function startRestTestServer(handler: RestTestHandler = echoRequest): Promise<RestTestServer> {
  const requests: RecordedRestRequest[] = [];
  let current = handler;
  const server = createServer((request, response) => {
    record(request)
      .then(async (recorded) => {
        requests.push(recorded);
        send(response, await current(recorded));
      })
      .catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain" });
        response.end(String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respondWith(next) {
      current = next;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
