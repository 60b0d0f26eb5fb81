import { CharterError } from "../foundation/charter-error.js";
import type { SessionError } from "./session-state.js";

/**
 * What a result reports of a thrown failure: a CharterError's code, message and `details` (when it has any);
 * anything else is an INTERNAL_ERROR with its message.
 */
export function sessionErrorFrom(error: unknown): SessionError {
  const code = CharterError.isInstance(error) ? error.code : "INTERNAL_ERROR";
  const message = error instanceof Error ? error.message : String(error);
  const details = CharterError.isInstance(error) ? error.details : {};
  return { code, message, ...(Object.keys(details).length > 0 ? { details } : {}) };
}
