import { CharterError } from "../../foundation/charter-error.js";

/** Listing pages are offsets into the newest-first list, handed out as opaque cursors. */
export function encodeCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ offset }), "utf8").toString("base64url");
}

export function decodeCursor(cursor: string): number {
  try {
    const { offset } = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { offset?: unknown };
    if (typeof offset === "number" && Number.isInteger(offset) && offset >= 0) return offset;
  } catch {
    // Answered below, as any cursor this server did not hand out.
  }
  throw new CharterError("REQUEST_INVALID", "the cursor is not one this server handed out (use nextCursor)", {
    details: { location: "querystring", issues: [{ path: "querystring/cursor", message: "unknown cursor" }] },
  });
}
