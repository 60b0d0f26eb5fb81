import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { anthropicWire } from "./scripted-anthropic-wire.js";
import { googleWire } from "./scripted-google-wire.js";
import { ollamaWire } from "./scripted-ollama-wire.js";
import { isAnswerStep, resolveScriptedAnswer } from "./scripted-openai-answer.js";
import { openAIChatWire } from "./scripted-openai-chat-wire.js";
import type { ScriptedStep } from "./scripted-openai-step.js";
import { openRouterWire } from "./scripted-openrouter-wire.js";
import { responsesWire } from "./scripted-responses-wire.js";
import type { ScriptedWireFormat, ScriptedWireFormatName } from "./scripted-wire-format.js";

/** One request the server received, in arrival order. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** Header names in lower case, as Node delivers them. */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body, or null when the body was not JSON. */
  readonly body: unknown;
  readonly bodyText: string;
  /** 0-based index among model requests (of any wire format); null for other paths. */
  readonly completionIndex: number | null;
  /** The wire format of a model request; null for other paths. */
  readonly wire: ScriptedWireFormatName | null;
  /** True when the request arrived after the script was exhausted (answered with HTTP 500). */
  readonly scriptExhausted: boolean;
}

export type ScriptedResponder = (
  request: RecordedRequest,
  index: number,
) => ScriptedStep | Promise<ScriptedStep>;

interface ScriptedServerHooks {
  /**
   * For a step whose stream is cut (`stream.cutAfterChunks`): awaited after the chunks are sent and before
   * the connection breaks, so a test can let the client take in what arrived first (a cut races with the
   * data still in flight otherwise).
   */
  readonly beforeCut?: (request: RecordedRequest) => Promise<void>;
}

export type ScriptedProviderServerOptions = ScriptedServerHooks &
  (
    | { readonly script: readonly ScriptedStep[]; readonly respond?: undefined }
    | { readonly respond: ScriptedResponder; readonly script?: undefined }
  );

export interface ScriptedProviderServer {
  /** `http://127.0.0.1:PORT/v1`: the OpenAI (chat and responses), OpenAI-compatible and Anthropic base URL. */
  readonly baseUrl: string;
  /** The base URL a client of each wire format is configured with. */
  readonly baseUrls: Readonly<Record<ScriptedWireFormatName, string>>;
  readonly requests: RecordedRequest[];
  /** Steps not consumed yet (always 0 with a `respond` function). */
  remaining(): number;
  close(): Promise<void>;
}

const wireFormats: readonly ScriptedWireFormat[] = [
  openAIChatWire,
  responsesWire,
  anthropicWire,
  googleWire,
  ollamaWire,
  openRouterWire,
];

/**
 * A real HTTP server on 127.0.0.1 that answers model requests from a script, in the wire format of each
 * provider API the request was made in: OpenAI chat completions and Responses, Anthropic Messages,
 * Gemini generateContent / streamGenerateContent, Ollama chat and OpenRouter, streamed or not. One script
 * serves every format, in arrival order. Strict: a request after the last step is answered with HTTP 500
 * and `error.code = "script_exhausted"`, and recorded, so a test can assert that the client made no
 * unexpected call.
 */
export async function startScriptedProviderServer(
  options: ScriptedProviderServerOptions,
): Promise<ScriptedProviderServer> {
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
    const [path = "/", query = ""] = (request.url ?? "/").split("?");
    const wire = request.method === "POST" ? wireFormats.find((format) => format.matches(path)) : undefined;
    const completionIndex = wire === undefined ? null : completionCount++;
    const scriptExhausted =
      completionIndex !== null && options.respond === undefined && completionIndex >= script.length;
    const recorded: RecordedRequest = {
      method: request.method ?? "",
      path,
      headers: flattenHeaders(request),
      body: parseJson(bodyText),
      bodyText,
      completionIndex,
      wire: wire?.name ?? null,
      scriptExhausted,
    };
    requests.push(recorded);

    if (wire === undefined || completionIndex === null) {
      sendJson(response, 404, { error: { message: `no route for ${path}`, type: "not_found", code: null } });
      return;
    }
    if (scriptExhausted) {
      sendJson(response, 500, {
        error: {
          message: `the script has ${script.length} steps and request ${completionIndex + 1} arrived`,
          type: "scripted_server_error",
          code: "script_exhausted",
        },
      });
      return;
    }
    const step =
      options.respond === undefined
        ? script[completionIndex]!
        : await options.respond(recorded, completionIndex);
    await answer(step, wire, recorded, query, completionIndex + 1, response);
  }

  async function answer(
    step: ScriptedStep,
    wire: ScriptedWireFormat,
    recorded: RecordedRequest,
    query: string,
    answerNumber: number,
    response: ServerResponse,
  ): Promise<void> {
    switch (step.kind) {
      case "delay": {
        const clientGone = await waitUnlessClosed(step.ms, response);
        if (!clientGone) await answer(step.then, wire, recorded, query, answerNumber, response);
        return;
      }
      case "disconnect":
        response.socket?.destroy();
        return;
      case "error":
        sendJson(response, step.status, step.body ?? wire.defaultErrorBody(step.status), step.headers);
        return;
      case "raw": {
        const bytes = step.gzip === true ? gzipSync(step.body) : Buffer.from(step.body);
        response.writeHead(step.status ?? 200, {
          "content-type": step.contentType ?? "application/json",
          "content-length": bytes.byteLength,
          ...(step.gzip === true ? { "content-encoding": "gzip" } : {}),
        });
        response.end(bytes);
        return;
      }
      default:
        break;
    }
    if (!isAnswerStep(step))
      throw new TypeError(`unknown scripted step kind ${(step as { kind: string }).kind}`);
    const wireRequest = { path: recorded.path, query, body: recorded.body };
    const resolved = resolveScriptedAnswer(step, {
      answerNumber,
      model: wire.requestedModel(wireRequest) ?? "scripted-model",
      requestBodyLength: recorded.bodyText.length,
    });
    if (!wire.streams(wireRequest)) {
      sendJson(response, 200, wire.answerBody(resolved));
      return;
    }
    response.writeHead(200, {
      "content-type": wire.streamContentType,
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    const frames = wire.answerFrames(resolved, wireRequest);
    const behaviour = step.stream ?? {};
    if (behaviour.cutAfterChunks !== undefined) {
      for (const frame of frames.slice(0, behaviour.cutAfterChunks)) response.write(frame);
      await new Promise<void>((resolve) => response.write("", () => resolve()));
      await options.beforeCut?.(recorded);
      response.socket?.destroy();
      return;
    }
    if (behaviour.errorAfterChunks !== undefined) {
      for (const frame of frames.slice(0, behaviour.errorAfterChunks)) response.write(frame);
      response.end(wire.errorFrame(behaviour.errorFrame ?? wire.defaultErrorBody(500)));
      return;
    }
    for (const frame of frames) response.write(frame);
    response.end(wire.streamEnd);
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
  const origin = `http://127.0.0.1:${port}`;
  const baseUrls = Object.fromEntries(
    wireFormats.map((format) => [format.name, `${origin}${format.basePath}`]),
  ) as Record<ScriptedWireFormatName, string>;

  return {
    baseUrl: baseUrls["openai-chat"],
    baseUrls,
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
