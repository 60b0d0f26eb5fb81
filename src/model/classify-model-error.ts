import { describeNetworkFailure } from "./describe-network-failure.js";
import { ModelCallError } from "./model-call-error.js";
import { parseRetryAfterMs } from "./parse-retry-after.js";
import type { ProviderFailureReader } from "./provider-failure.js";

/** What the caller knows about a failed model call besides the error itself. */
export interface ModelErrorContext {
  /** Epoch milliseconds, for `Retry-After` HTTP dates. */
  readonly now: number;
  /** `provider/model`, named in messages. */
  readonly target?: string;
  /** The caller's own abort signal fired. */
  readonly abortedByCaller?: boolean;
  /** The client-side timeout fired. */
  readonly timedOut?: boolean;
  /** The transport reports that no HTTP answer arrived (for example the AI SDK's APICallError without a status). */
  readonly noHttpAnswer?: boolean;
  /** The provider's own reading of its error bodies and headers, consulted before the generic rules. */
  readonly readProviderFailure?: ProviderFailureReader;
}

/** The facts of a non-2xx (or unusable 2xx) HTTP answer. */
export interface HttpFailureFacts {
  readonly statusCode: number;
  readonly headers?: Readonly<Record<string, string | undefined>>;
  /** The error body: parsed JSON, or the raw text when it was not JSON. */
  readonly body?: unknown;
  readonly now: number;
  readonly target?: string;
  readonly cause?: unknown;
  readonly readProviderFailure?: ProviderFailureReader;
}

// Connection-level failures reported by Node and undici through `error.code` on the error or its causes.
const networkErrorCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "ConnectionRefused",
  "ConnectionClosed",
  "FailedToOpenSocket",
]);
const timeoutErrorCodes = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

function prefix(target: string | undefined): string {
  return target === undefined ? "model call" : `model call to ${target}`;
}

/** The body as JSON when it is JSON text, else as it is. */
function parsedBody(body: unknown): unknown {
  if (typeof body !== "string") return body;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/** The error code and type an OpenAI-style error body carries in `error.code` / `error.type`. */
function errorBodyIdentifiers(parsed: unknown): { code: string | null; type: string | null } {
  const error = (parsed as { error?: unknown } | null)?.error;
  if (typeof error !== "object" || error === null) return { code: null, type: null };
  const { code, type } = error as { code?: unknown; type?: unknown };
  return {
    code: typeof code === "string" || typeof code === "number" ? String(code) : null,
    type: typeof type === "string" ? type : null,
  };
}

/**
 * Classifies an HTTP answer by status, error body identifiers and headers (seed 000 §5):
 * 401/403 auth; 402, or 429 with `insufficient_quota`, quota; other 429 rate_limit with Retry-After;
 * 408 timeout; 5xx server; other 4xx bad_request; 2xx (an unusable success body) invalid_response.
 */
export function classifyHttpFailure(facts: HttpFailureFacts): ModelCallError {
  const { statusCode } = facts;
  const where = prefix(facts.target);
  const common = { statusCode, rawResponse: facts.body ?? null, cause: facts.cause };
  const body = parsedBody(facts.body);
  const verdict = facts.readProviderFailure?.({ statusCode, body, headers: facts.headers, now: facts.now });
  if (verdict) {
    const retryAfterMs =
      verdict.retryAfterMs ??
      (verdict.errorClass === "rate_limit" ? parseRetryAfterMs(facts.headers, facts.now) : null);
    return new ModelCallError(verdict.errorClass, `${where} ${verdict.reason} (HTTP ${statusCode})`, {
      ...common,
      retryAfterMs,
    });
  }
  if (statusCode === 401 || statusCode === 403) {
    return new ModelCallError("auth", `${where} was refused: HTTP ${statusCode} (authentication)`, common);
  }
  if (statusCode === 402) {
    return new ModelCallError("quota", `${where} was refused: HTTP 402 (quota or billing)`, common);
  }
  if (statusCode === 429) {
    const { code, type } = errorBodyIdentifiers(body);
    if (code === "insufficient_quota" || type === "insufficient_quota") {
      return new ModelCallError("quota", `${where} was refused: HTTP 429 with insufficient_quota`, common);
    }
    const retryAfterMs = parseRetryAfterMs(facts.headers, facts.now);
    return new ModelCallError(
      "rate_limit",
      `${where} was rate limited: HTTP 429${retryAfterMs === null ? "" : `, retry after ${retryAfterMs} ms`}`,
      { ...common, retryAfterMs },
    );
  }
  if (statusCode === 408) return new ModelCallError("timeout", `${where} timed out: HTTP 408`, common);
  if (statusCode >= 500) return new ModelCallError("server", `${where} failed: HTTP ${statusCode}`, common);
  if (statusCode >= 400) {
    return new ModelCallError("bad_request", `${where} was rejected: HTTP ${statusCode}`, common);
  }
  return new ModelCallError(
    "invalid_response",
    `${where} answered HTTP ${statusCode} with a body that is not a valid chat completion`,
    common,
  );
}

/**
 * A connection that never got an HTTP answer: the message and `details` name the URL and the system error
 * (`ECONNREFUSED 127.0.0.1:9`, `ENOTFOUND api.example.com`), so that the person reading it knows what to fix.
 */
function networkFailure(where: string, error: unknown): ModelCallError {
  const { url, cause } = describeNetworkFailure(error);
  const destination = url === null ? "the provider" : url;
  return new ModelCallError(
    "network",
    `${where} could not reach ${destination}${cause === null ? "" : ` (${cause})`}`,
    {
      cause: error,
      details: { url, networkCause: cause },
    },
  );
}

function findErrorCode(error: unknown, codes: ReadonlySet<string>): string | null {
  const visited = new Set<unknown>();
  let current = error;
  while (typeof current === "object" && current !== null && !visited.has(current)) {
    visited.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && codes.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

function errorName(error: unknown): string | null {
  return error instanceof Error || (typeof DOMException === "function" && error instanceof DOMException)
    ? error.name
    : null;
}

/** The HTTP facts an error carries, read structurally (the AI SDK's APICallError has exactly these). */
interface HttpErrorFields {
  readonly statusCode?: unknown;
  readonly responseHeaders?: Readonly<Record<string, string | undefined>>;
  readonly data?: unknown;
  readonly responseBody?: unknown;
}

function httpStatusOf(error: unknown): number | null {
  const statusCode = (error as HttpErrorFields | null)?.statusCode;
  return typeof error === "object" && typeof statusCode === "number" ? statusCode : null;
}

/**
 * Turns whatever a model call threw into a `ModelCallError`, once, from structured facts only: who
 * aborted, the HTTP status, headers and error body the error carries (`statusCode`, `responseHeaders`,
 * `data` / `responseBody`), Node/undici error codes along the cause chain, and error names. Message text
 * is never consulted. Transport-specific error classes are recognised by the provider before this.
 */
export function classifyModelError(error: unknown, context: ModelErrorContext): ModelCallError {
  if (ModelCallError.isModelCallError(error)) return error;
  const where = prefix(context.target);
  if (context.abortedByCaller) {
    return new ModelCallError("aborted", `${where} was aborted by the caller`, { cause: error });
  }
  if (context.timedOut) {
    return new ModelCallError("timeout", `${where} timed out on the client`, { cause: error });
  }

  const httpStatus = httpStatusOf(error);
  const httpFailure = (statusCode: number) => {
    const fields = error as HttpErrorFields;
    return classifyHttpFailure({
      statusCode,
      headers: fields.responseHeaders,
      body: fields.data ?? fields.responseBody,
      now: context.now,
      target: context.target,
      cause: error,
      readProviderFailure: context.readProviderFailure,
    });
  };
  if (httpStatus !== null && httpStatus >= 300) return httpFailure(httpStatus);
  // A 2xx whose body broke off mid-read carries the connection error as its cause: that is the network.
  const timeoutCode = findErrorCode(error, timeoutErrorCodes);
  if (timeoutCode !== null) {
    return new ModelCallError("timeout", `${where} timed out in the HTTP client (${timeoutCode})`, {
      cause: error,
    });
  }
  const networkCode = findErrorCode(error, networkErrorCodes);
  if (networkCode !== null) return networkFailure(where, error);
  if (httpStatus !== null) return httpFailure(httpStatus);
  // An error the provider reported inside a stream that is already under way (HTTP 200), with no status.
  if (context.readProviderFailure !== undefined && typeof error === "object" && error !== null) {
    const fields = error as HttpErrorFields;
    const body = parsedBody(fields.data ?? fields.responseBody ?? error);
    const verdict = context.readProviderFailure({
      statusCode: null,
      body,
      headers: undefined,
      now: context.now,
    });
    if (verdict) {
      return new ModelCallError(verdict.errorClass, `${where} ${verdict.reason}`, {
        retryAfterMs: verdict.retryAfterMs ?? null,
        rawResponse: body,
        cause: error,
      });
    }
  }
  const name = errorName(error);
  if (name === "TimeoutError") return new ModelCallError("timeout", `${where} timed out`, { cause: error });
  if (name === "AbortError") return new ModelCallError("aborted", `${where} was aborted`, { cause: error });
  if (context.noHttpAnswer) return networkFailure(where, error);
  // Anything else failed before or outside the HTTP exchange; another attempt may still succeed.
  return new ModelCallError("bad_request", `${where} failed unexpectedly`, { cause: error });
}
