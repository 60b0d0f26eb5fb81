import type { FastifyReply } from "fastify";

/** How often an idle stream sends a comment line, so that proxies do not close a connection that waits long. */
const keepAliveMilliseconds = 15_000;

/**
 * A server-sent event stream on a hijacked Fastify reply: `send` writes one event (`id`, `event`, `data` lines),
 * `signal` aborts when the client goes away or the server closes, `end` finishes the response. Writing waits for
 * the socket to drain, so a slow client slows its own stream instead of growing the server's memory.
 */
export interface EventStream {
  readonly signal: AbortSignal;
  send(event: { readonly id?: string; readonly event?: string; readonly data: string }): Promise<void>;
  end(): void;
}

/** Opens the stream: 200 with the event-stream headers (and any `headers` given), written at once. */
export function openEventStream(
  reply: FastifyReply,
  headers: Readonly<Record<string, string>> = {},
  closing?: AbortSignal,
): EventStream {
  const raw = reply.raw;
  const controller = new AbortController();
  const abort = () => controller.abort();
  raw.once("close", abort);
  closing?.addEventListener("abort", abort, { once: true });
  reply.hijack();
  raw.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    // nginx buffers responses by default; an event must reach the client when it happens.
    "x-accel-buffering": "no",
    "x-request-id": String(reply.request.id),
    ...headers,
  });
  raw.flushHeaders();
  const keepAlive = setInterval(() => {
    if (!raw.writableEnded) raw.write(": keep-alive\n\n");
  }, keepAliveMilliseconds);
  keepAlive.unref();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(keepAlive);
    raw.off("close", abort);
    closing?.removeEventListener("abort", abort);
    if (!raw.writableEnded) raw.end();
  };
  controller.signal.addEventListener("abort", end, { once: true });
  return {
    signal: controller.signal,
    async send({ id, event, data }) {
      if (raw.writableEnded || controller.signal.aborted) return;
      let text = "";
      if (id !== undefined) text += `id: ${id}\n`;
      if (event !== undefined) text += `event: ${event}\n`;
      // A data value never holds a line break here (JSON text), but the format allows several data lines.
      for (const line of data.split("\n")) text += `data: ${line}\n`;
      if (!raw.write(`${text}\n`)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            raw.off("drain", done);
            controller.signal.removeEventListener("abort", done);
            resolve();
          };
          raw.once("drain", done);
          controller.signal.addEventListener("abort", done, { once: true });
        });
      }
    },
    end,
  };
}
