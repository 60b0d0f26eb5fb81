import { AsyncLocalStorage } from "node:async_hooks";
import type { FetchFunction } from "@ai-sdk/provider-utils";

/** The size limit of one model call and whether the response went past it. */
export interface ResponseSizeWatch {
  readonly maxBytes: number;
  /** Bytes of the body received so far (or the declared length that was refused). */
  receivedBytes: number;
  exceeded: boolean;
}

/** Thrown into the body stream (or by fetch) when a response goes past its limit. */
export class ResponseTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the model response is larger than ${maxBytes} bytes`);
    this.name = "ResponseTooLargeError";
  }
}

// The limit travels with the call through the provider package, which calls fetch itself: each call sees its own.
const currentWatch = new AsyncLocalStorage<ResponseSizeWatch>();

/** Runs one model call with a response size limit that `limitResponseSize` enforces on every fetch it makes. */
export function withResponseSizeLimit<T>(watch: ResponseSizeWatch, call: () => Promise<T>): Promise<T> {
  return currentWatch.run(watch, call);
}

/**
 * Wraps fetch so that a response body longer than the current call's limit is refused: at once when its
 * declared length says so, else as soon as the bytes received pass it (streamed or not), so a huge response is
 * never held in memory. The watch records it, so the client can classify the failure whatever error the
 * provider package wraps it in.
 */
export function limitResponseSize(fetch: FetchFunction): FetchFunction {
  return async (input, init) => {
    const watch = currentWatch.getStore();
    const response = await fetch(input, init);
    if (watch === undefined || response.body === null) return response;
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    if (Number.isFinite(declared) && declared > watch.maxBytes) {
      watch.exceeded = true;
      watch.receivedBytes = declared;
      await response.body.cancel().catch(() => {});
      throw new ResponseTooLargeError(watch.maxBytes);
    }
    // A declared length within the limit bounds the body (fetch refuses more bytes than declared), so the body
    // needs no counting stream: a non-streamed answer is read straight from the socket. Not when the body is
    // encoded: fetch decompresses it, and the length declared is the compressed one.
    if (Number.isFinite(declared) && isIdentityEncoded(response.headers)) {
      watch.receivedBytes = declared;
      return response;
    }
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          watch.receivedBytes += chunk.byteLength;
          if (watch.receivedBytes > watch.maxBytes) {
            watch.exceeded = true;
            controller.error(new ResponseTooLargeError(watch.maxBytes));
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function isIdentityEncoded(headers: Headers): boolean {
  const encoding = headers.get("content-encoding")?.trim().toLowerCase();
  return encoding === undefined || encoding === "" || encoding === "identity";
}
