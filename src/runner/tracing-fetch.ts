import type { SecretRedactor } from "../foundation/secret-redactor.js";

type Fetch = typeof globalThis.fetch;

/**
 * `--trace-llm`: a fetch that writes every HTTP exchange with a model endpoint (method, URL, headers and body
 * of the request; status, headers and body of the response, a streamed body once it has ended), each passed
 * through the run's secret redactor first, so that an API key in a header or a body is never printed. The
 * exchange itself is untouched: the response the caller reads is the original, the trace reads a copy.
 */
export function createTracingFetch(
  target: string,
  write: (text: string) => void,
  redactor: SecretRedactor,
  fetch: Fetch = globalThis.fetch,
): Fetch {
  let exchanges = 0;
  const print = (text: string) => write(redactor.redactString(text));
  const headersText = (headers: Headers) =>
    JSON.stringify(redactor.redactValue(Object.fromEntries(headers.entries())));
  return async (input, init) => {
    const exchange = ++exchanges;
    const request = new Request(input, init);
    const body = typeof init?.body === "string" ? init.body : init?.body == null ? "" : "(binary body)";
    print(
      `[llm ${target} #${exchange}] >> ${request.method} ${request.url}\n  headers ${headersText(request.headers)}\n  body ${body}`,
    );
    let response: Response;
    try {
      response = await fetch(input, init);
    } catch (error) {
      const cause = (error as { cause?: { code?: unknown } })?.cause?.code;
      print(
        `[llm ${target} #${exchange}] << no answer: ${error instanceof Error ? error.message : String(error)}${typeof cause === "string" ? ` (${cause})` : ""}`,
      );
      throw error;
    }
    const head = `[llm ${target} #${exchange}] << ${response.status} ${response.statusText}\n  headers ${headersText(response.headers)}`;
    if (response.body === null) {
      print(head);
      return response;
    }
    // A copy for the trace, read to its end in the background: the caller's own reading is never delayed.
    response
      .clone()
      .text()
      .then(
        (text) => print(`${head}\n  body ${text}`),
        (error: unknown) =>
          print(`${head}\n  body broke off: ${error instanceof Error ? error.message : String(error)}`),
      );
    return response;
  };
}
