import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  completionBody,
  completionChunks,
  isAnswerStep,
  resolveScriptedAnswer,
  scriptedErrorBody,
} from "./scripted-openai-answer.js";
import type { ScriptedStep } from "./scripted-openai-step.js";

/** One request the server received, in arrival order. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** Header names in lower case, as Node delivers them. */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body, or null when the body was not JSON. */
  readonly body: unknown;
  readonly bodyText: string;
  /** 0-based index among chat completion requests; null for other paths. */
  readonly completionIndex: number | null;
  /** True when the request arrived after the script was exhausted (answered with HTTP 500). */
  readonly scriptExhausted: boolean;
}

export type ScriptedResponder = (
  request: RecordedRequest,
  index: number,
) => ScriptedStep | Promise<ScriptedStep>;

export type ScriptedOpenAIServerOptions =
  | { readonly script: readonly ScriptedStep[]; readonly respond?: undefined }
  | { readonly respond: ScriptedResponder; readonly script?: undefined };

export interface ScriptedOpenAIServer {
  /** `http://127.0.0.1:PORT/v1` */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** Steps not consumed yet (always 0 with a `respond` function). */
  remaining(): number;
  close(): Promise<void>;
}

const completionPath = "/v1/chat/completions";

/**
 * A real HTTP server on 127.0.0.1 that speaks OpenAI chat completions from a script. Strict: a request
 * after the last step is answered with HTTP 500 and `error.code = "script_exhausted"`, and recorded, so a
 * test can assert that the client made no unexpected call.
 */
export async function startScriptedOpenAIServer(
  options: ScriptedOpenAIServerOptions,
): Promise<ScriptedOpenAIServer> {
  const script = options.script ?? [];
  const requests: RecordedRequest[] = [];
  const pendingTimers = new Set<NodeJS.Timeout>();
  let completionCount = 0;

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) {
        sendJson(response, 500, {
          error: { message: String(error), type: "scripted_server_error", code: null },
        });
      } else {
        response.destroy();
      }
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const bodyText = await readBody(request);
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    const isCompletion = request.method === "POST" && path === completionPath;
    const completionIndex = isCompletion ? completionCount++ : null;
    const scriptExhausted =
      isCompletion && options.respond === undefined && completionIndex! >= script.length;
    const recorded: RecordedRequest = {
      method: request.method ?? "",
      path,
      headers: flattenHeaders(request),
      body: parseJson(bodyText),
      bodyText,
      completionIndex,
      scriptExhausted,
    };
    requests.push(recorded);

    if (!isCompletion) {
      sendJson(response, 404, { error: { message: `no route for ${path}`, type: "not_found", code: null } });
      return;
    }
    if (scriptExhausted) {
      sendJson(response, 500, {
        error: {
          message: `the script has ${script.length} steps and request ${completionIndex! + 1} arrived`,
          type: "scripted_server_error",
          code: "script_exhausted",
        },
      });
      return;
    }
    const step =
      options.respond === undefined
        ? script[completionIndex!]!
        : await options.respond(recorded, completionIndex!);
    await answer(step, recorded, completionIndex! + 1, response);
  }

  async function answer(
    step: ScriptedStep,
    recorded: RecordedRequest,
    answerNumber: number,
    response: ServerResponse,
  ): Promise<void> {
    switch (step.kind) {
      case "delay": {
        const clientGone = await waitUnlessClosed(step.ms, response);
        if (!clientGone) await answer(step.then, recorded, answerNumber, response);
        return;
      }
      case "disconnect":
        response.socket?.destroy();
        return;
      case "error":
        sendJson(response, step.status, scriptedErrorBody(step.status, step.body), step.headers);
        return;
      case "raw":
        response.writeHead(step.status ?? 200, {
          "content-type": step.contentType ?? "application/json",
          "content-length": Buffer.byteLength(step.body),
        });
        response.end(step.body);
        return;
      default:
        break;
    }
    if (!isAnswerStep(step))
      throw new TypeError(`unknown scripted step kind ${(step as { kind: string }).kind}`);
    const body = recorded.body as {
      model?: unknown;
      stream?: unknown;
      stream_options?: { include_usage?: unknown };
    };
    const resolved = resolveScriptedAnswer(step, {
      answerNumber,
      model: typeof body?.model === "string" ? body.model : "scripted-model",
      requestBodyLength: recorded.bodyText.length,
    });
    if (body?.stream === true) {
      response.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
      for (const chunk of completionChunks(resolved, body.stream_options?.include_usage === true)) {
        response.write(`data: ${JSON.stringify(chunk)}\n\n`);
      }
      response.end("data: [DONE]\n\n");
      return;
    }
    sendJson(response, 200, completionBody(resolved));
  }

  /** Resolves true when the client went away before the delay ended (for example after its timeout). */
  function waitUnlessClosed(milliseconds: number, response: ServerResponse): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(false), milliseconds);
      pendingTimers.add(timer);
      const onClose = () => finish(true);
      response.once("close", onClose);
      function finish(clientGone: boolean): void {
        clearTimeout(timer);
        pendingTimers.delete(timer);
        response.off("close", onClose);
        resolve(clientGone);
      }
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    remaining: () => (options.respond === undefined ? Math.max(0, script.length - completionCount) : 0),
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of pendingTimers) clearTimeout(timer);
        pendingTimers.clear();
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive connections would hold close() open until they time out.
        server.closeAllConnections();
      }),
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function flattenHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}
