import { CharterError } from "../../foundation/charter-error.js";
import type { RunDispatcher } from "../execution/run-dispatcher.js";
import { authenticatedErrors, errorReference } from "./error-schema.js";

/** The answers of every cancel route (agent, workflow and work item runs). */
export const cancelResponses = {
  202: {
    type: "object",
    required: ["runId", "cancelling"],
    properties: { runId: { type: "string" }, cancelling: { type: "boolean" } },
  },
  404: errorReference,
  409: errorReference,
  ...authenticatedErrors,
} as const;

/**
 * Asks the dispatcher to stop one of the caller's runs; RUN_STATE_CONFLICT (409) naming its status when there is
 * nothing to stop (it has ended). `what` names the kind of run in the message ("run", "workflow run").
 */
export async function cancelServerRun(
  dispatcher: RunDispatcher,
  tenantId: string,
  runId: string,
  what: string,
  statusOf: () => Promise<string> | string,
): Promise<{ readonly runId: string; readonly cancelling: true }> {
  if (!(await dispatcher.cancel(tenantId, runId))) {
    const status = await statusOf();
    throw new CharterError("RUN_STATE_CONFLICT", `${what} ${runId} is ${status}: nothing to cancel`, {
      details: { runId, status },
    });
  }
  return { runId, cancelling: true };
}
