/** What a person needs to fix a connection failure: where Charter tried to go, and what the network said. */
export interface NetworkFailureFacts {
  /** The URL of the request, when the transport reported it (the AI SDK's APICallError carries `url`). */
  readonly url: string | null;
  /** `ECONNREFUSED 127.0.0.1:9`, `ENOTFOUND api.example.com`, or the transport's own words when it gave no code. */
  readonly cause: string | null;
  /** The Node/undici error code, when there is one. */
  readonly networkCode: string | null;
}

interface SystemErrorFields {
  readonly code?: unknown;
  readonly address?: unknown;
  readonly port?: unknown;
  readonly hostname?: unknown;
  readonly message?: unknown;
  readonly url?: unknown;
  readonly cause?: unknown;
}

/**
 * Reads the URL and the system error out of an error and its causes (structurally: `url` on the request error,
 * `code` with `address`/`port` or `hostname` on the system error Node attaches as a cause). Only for display and
 * `error.details`: the error class is decided elsewhere, from codes, never from these words.
 */
export function describeNetworkFailure(error: unknown): NetworkFailureFacts {
  let url: string | null = null;
  let cause: string | null = null;
  let networkCode: string | null = null;
  let innermostMessage: string | null = null;
  const visited = new Set<unknown>();
  let current = error;
  while (typeof current === "object" && current !== null && !visited.has(current)) {
    visited.add(current);
    const fields = current as SystemErrorFields;
    if (url === null && typeof fields.url === "string" && fields.url !== "") url = fields.url;
    if (networkCode === null && typeof fields.code === "string" && /^[A-Z][A-Z0-9_]+$/.test(fields.code)) {
      networkCode = fields.code;
      const where =
        typeof fields.address === "string"
          ? `${fields.address}${typeof fields.port === "number" ? `:${fields.port}` : ""}`
          : typeof fields.hostname === "string"
            ? fields.hostname
            : null;
      cause = where === null ? fields.code : `${fields.code} ${where}`;
    }
    if (typeof fields.message === "string" && fields.message !== "") innermostMessage = fields.message;
    current = fields.cause;
  }
  // No system error code (fetch refusing a port it never dials, say): the transport's own innermost words.
  if (cause === null) cause = innermostMessage;
  return { url, cause, networkCode };
}
