import { CharterError } from "../../foundation/charter-error.js";
import type { ToolOutput } from "../tool-definition.js";

const failureBodyCharacters = 2000;

function isJson(contentType: string): boolean {
  return contentType === "application/json" || contentType.endsWith("+json");
}

function isText(contentType: string): boolean {
  return (
    contentType === "" ||
    contentType.startsWith("text/") ||
    isJson(contentType) ||
    contentType.endsWith("+xml") ||
    contentType === "application/xml" ||
    contentType === "application/javascript" ||
    contentType === "application/x-www-form-urlencoded" ||
    contentType === "application/x-ndjson"
  );
}

/** Reads at most `maxBytes` of the body; a longer body is refused rather than held in memory. */
async function readBody(response: Response, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  if (response.body === null) return Buffer.alloc(0);
  for await (const chunk of response.body) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      await response.body.cancel().catch(() => {});
      throw new CharterError(
        "TOOL_RESPONSE_TOO_LARGE",
        `the response is larger than ${maxBytes} bytes (HTTP ${response.status})`,
        { details: { status: response.status, maxBytes } },
      );
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

function bodyText(body: Buffer, contentType: string): string {
  if (!isText(contentType)) return JSON.stringify({ contentType, bytes: body.byteLength });
  const text = body.toString("utf8");
  if (!isJson(contentType)) return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * What the model reads from an HTTP response. A 2xx body is the output: JSON pretty-printed, text as it is,
 * binary content described by its type and size. Any other status is a tool failure naming the status, with
 * the start of the body. A HEAD response, having no body, is described by its status and headers.
 */
export async function restResponseToOutput(
  response: Response,
  options: { readonly method: string; readonly maxBytes: number },
): Promise<ToolOutput> {
  const status = `HTTP ${response.status}${response.statusText === "" ? "" : ` ${response.statusText}`}`;
  const contentType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (options.method === "HEAD") {
    const headers = Object.fromEntries(response.headers.entries());
    return { text: JSON.stringify({ status: response.status, headers }, null, 2), isError: !response.ok };
  }
  const text = bodyText(await readBody(response, options.maxBytes), contentType);
  const empty = text.trim() === "";
  if (!response.ok) {
    const trimmed = text.trim();
    const excerpt =
      trimmed.length > failureBodyCharacters ? `${trimmed.slice(0, failureBodyCharacters)}…` : trimmed;
    return { text: empty ? status : `${status}: ${excerpt}`, isError: true };
  }
  return { text: empty ? `${status} (empty body)` : text, isError: false };
}
