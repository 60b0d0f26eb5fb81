import { readFile } from "node:fs/promises";
import { CharterError } from "./charter-error.js";
import type { ErrorCode } from "./error-codes.js";

/**
 * A file the user named, read whole as UTF-8: one that cannot be read is the caller's `code`, with the file and
 * the system's reason (ENOENT, EACCES...) in the details, so each kind of file reports it the same way.
 */
export async function readFileText(absolutePath: string, code: ErrorCode, what: string): Promise<string> {
  try {
    return await readFile(absolutePath, "utf8");
  } catch (error) {
    throw new CharterError(code, `${what} ${absolutePath}`, {
      details: { file: absolutePath, reason: (error as NodeJS.ErrnoException).code ?? "unreadable" },
      cause: error,
    });
  }
}
