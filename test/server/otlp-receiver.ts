import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** One export a process sent: `/v1/traces` or `/v1/metrics`, as it arrived. */
export interface OtlpExport {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly contentType: string;
  readonly body: Buffer;
  /** The body parsed, for `application/json` exports; null otherwise. */
  readonly json: unknown;
}

/** A real OTLP/HTTP receiver on loopback: it keeps every export and answers each with success. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:PORT`: what `OTEL_EXPORTER_OTLP_ENDPOINT` is set to. */
  readonly endpoint: string;
  readonly exports: OtlpExport[];
  /**
   * Resolves with the exports once `done` holds for them; rejects after `timeoutMilliseconds` (a bound so that a
   * missing export fails the test with what did arrive, never hangs it), naming `what` was awaited.
   */
  waitFor(
    what: string,
    done: (exports: readonly OtlpExport[]) => boolean,
    timeoutMilliseconds?: number,
  ): Promise<readonly OtlpExport[]>;
  close(): Promise<void>;
}

/** `status`: what every export is answered with (default 200, success; 400 is a collector refusing the data). */
export async function startOtlpReceiver(options: { readonly status?: number } = {}): Promise<OtlpReceiver> {
  const exports: OtlpExport[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      const contentType = request.headers["content-type"] ?? "";
      const json = contentType.startsWith("application/json")
        ? (JSON.parse(body.toString("utf8")) as unknown)
        : null;
      exports.push({ path: request.url ?? "", headers: request.headers, contentType, body, json });
      // An empty export service response: `{}` in JSON, zero bytes in protobuf.
      response.writeHead(options.status ?? 200, {
        "content-type": contentType.startsWith("application/json")
          ? "application/json"
          : "application/x-protobuf",
      });
      response.end(contentType.startsWith("application/json") ? "{}" : undefined);
      for (const waiter of [...waiters]) waiter();
    });
  });
  await new Promise<void>((resolveListening) => server.listen(0, "127.0.0.1", resolveListening));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    exports,
    waitFor(what, done, timeoutMilliseconds = 30_000) {
      return new Promise((resolveDone, rejectDone) => {
        const check = () => {
          if (!done(exports)) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolveDone(exports);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          rejectDone(
            new Error(
              `the OTLP receiver did not receive ${what} within ${timeoutMilliseconds} ms; it received ${exports.length} export(s): ${exports.map((each) => `${each.path} (${each.contentType}, ${each.body.length} bytes)`).join(", ")}`,
            ),
          );
        }, timeoutMilliseconds);
        waiters.add(check);
        check();
      });
    },
    close() {
      return new Promise((resolveClosed) => {
        server.closeAllConnections();
        server.close(() => resolveClosed());
      });
    },
  };
}
