import { CharterError } from "../../foundation/charter-error.js";
import type { RunEventType } from "../../store/run-event-records.js";
import type { RunStore } from "../../store/run-store.js";
import { appendRequestEvent } from "./append-request-event.js";
import type { RunExecutionContext } from "./run-execution-context.js";
import type { RunRequest } from "./run-request.js";

/**
 * Appends one lifecycle event of a workflow or work item run (redacted with the server's secrets) and tells the
 * process's listeners. False when the lifecycle was ended by someone else (a cancellation recorded meanwhile):
 * nothing more of this execution is recorded, and that is not a failure.
 */
export async function recordRunEvent(
  store: RunStore,
  request: RunRequest,
  context: Pick<RunExecutionContext, "events" | "redactor">,
  type: RunEventType,
  data: Readonly<Record<string, unknown>>,
): Promise<boolean> {
  try {
    await appendRequestEvent(
      store,
      request,
      context,
      type,
      (context.redactor?.redactValue(data) ?? data) as Record<string, unknown>,
    );
    return true;
  } catch (error) {
    if (CharterError.isInstance(error) && error.details.reason === "run_not_running") return false;
    throw error;
  }
}

/** The data of FAILED for a run cancelled before or while it ran. */
export const cancelledRunData = {
  cancelled: true,
  error: { code: "INTERRUPTED", class: null, message: "the run was cancelled" },
} as const;

/** The data of FAILED for a run that could not run: the error's code, class and message. */
export function failedRunData(
  error: unknown,
  failureClass: (code: string) => string,
): Readonly<Record<string, unknown>> {
  if (CharterError.isInstance(error)) {
    return {
      outcome: "FAILED",
      error: { code: error.code, class: failureClass(error.code), message: error.message },
    };
  }
  return {
    outcome: "FAILED",
    error: { code: "INTERNAL_ERROR", class: "internal_error", message: "the run failed unexpectedly" },
  };
}
