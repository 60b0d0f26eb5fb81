import type { ErrorCode } from "./error-codes.js";

const brand = Symbol.for("charter.error");

/**
 * Every error Charter raises or reports carries a stable `code`. Callers branch on the code
 * (or on `isInstance`), never on the message, which is for humans and may change.
 */
export class CharterError extends Error {
  readonly [brand] = true;
  readonly code: ErrorCode;
  /** Whether repeating the same operation could succeed. */
  readonly isRetryable: boolean;
  /** Structured facts naming what was wrong and where (file, key, variable, tool...). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { isRetryable?: boolean; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CharterError";
    this.code = code;
    this.isRetryable = options.isRetryable ?? false;
    this.details = Object.freeze({ ...(options.details ?? {}) });
  }

  static isInstance(value: unknown): value is CharterError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }

  toJSON(): { code: ErrorCode; message: string; details: Readonly<Record<string, unknown>> } {
    return { code: this.code, message: this.message, details: this.details };
  }
}
