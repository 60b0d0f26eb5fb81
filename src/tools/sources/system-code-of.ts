/**
 * The system or undici code of a failed request or spawn (`ECONNREFUSED`, `UND_ERR_SOCKET`, `ENOENT`...): on
 * the error itself, its cause, or the cause's first error (Node reports a failed multi-address connect as an
 * AggregateError). `null` when there is none.
 */
export function systemCodeOf(error: unknown): string | null {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    const record = current as { cause?: unknown; errors?: unknown };
    current = record.cause ?? (Array.isArray(record.errors) ? record.errors[0] : undefined);
  }
  return null;
}
