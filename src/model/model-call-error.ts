import { CharterError } from "../foundation/charter-error.js";
import type { ErrorCode } from "../foundation/error-codes.js";
import type { ModelResponse } from "./model-client.js";

/**
 * The error classes of seed 000 §5, decided once from structured facts (status, error code, headers).
 * auth and quota are fatal; rate_limit waits (Retry-After, else backoff) and moves to the next target;
 * network, timeout and server move to the next target at once; bad_request and invalid_response are
 * attempts that failed and move on.
 */
export type ModelErrorClass =
  | "auth"
  | "quota"
  | "rate_limit"
  | "network"
  | "timeout"
  | "server"
  | "bad_request"
  | "invalid_response"
  | "aborted";

const codeByClass: Record<ModelErrorClass, ErrorCode> = {
  auth: "MODEL_AUTHENTICATION_FAILED",
  quota: "MODEL_QUOTA_EXCEEDED",
  rate_limit: "MODEL_RATE_LIMITED",
  network: "MODEL_NETWORK_ERROR",
  timeout: "MODEL_TIMEOUT",
  server: "MODEL_SERVER_ERROR",
  bad_request: "MODEL_BAD_REQUEST",
  invalid_response: "MODEL_INVALID_RESPONSE",
  aborted: "INTERRUPTED",
};

export class ModelCallError extends CharterError {
  readonly errorClass: ModelErrorClass;
  readonly statusCode: number | null;
  /** Milliseconds the provider asked us to wait (Retry-After), when it said. */
  readonly retryAfterMs: number | null;
  readonly isFatal: boolean;
  readonly rawResponse: unknown;
  /**
   * For a streamed answer that broke off: what had arrived before it did (text, reasoning, complete tool
   * calls, the chunks received), so the attempt can be kept in the transcript. Null otherwise.
   */
  readonly partialResponse: ModelResponse | null;

  constructor(
    errorClass: ModelErrorClass,
    message: string,
    facts: {
      statusCode?: number | null;
      retryAfterMs?: number | null;
      rawResponse?: unknown;
      partialResponse?: ModelResponse | null;
      cause?: unknown;
      /** Further facts for `details` (a network failure's `url` and `networkCause`). */
      details?: Readonly<Record<string, unknown>>;
      /** A more precise code than the class's own (MODEL_RESPONSE_TOO_LARGE is an invalid response). */
      code?: ErrorCode;
    } = {},
  ) {
    super(facts.code ?? codeByClass[errorClass], message, {
      isRetryable: !(errorClass === "auth" || errorClass === "quota" || errorClass === "aborted"),
      details: {
        errorClass,
        statusCode: facts.statusCode ?? null,
        retryAfterMs: facts.retryAfterMs ?? null,
        ...facts.details,
      },
      cause: facts.cause,
    });
    this.name = "ModelCallError";
    this.errorClass = errorClass;
    this.statusCode = facts.statusCode ?? null;
    this.retryAfterMs = facts.retryAfterMs ?? null;
    this.isFatal = errorClass === "auth" || errorClass === "quota";
    this.rawResponse = facts.rawResponse ?? null;
    this.partialResponse = facts.partialResponse ?? null;
  }

  static isModelCallError(value: unknown): value is ModelCallError {
    return CharterError.isInstance(value) && (value as { errorClass?: unknown }).errorClass !== undefined;
  }
}
