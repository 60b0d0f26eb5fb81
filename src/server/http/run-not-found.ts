import { CharterError } from "../../foundation/charter-error.js";

/**
 * The 404 for a run the caller's tenant does not have. A workflow or work item route names its kind (in the
 * message and the details), so a run of another kind asked for on that route is told apart from a missing run.
 */
export function runNotFound(runId: string, kind?: "workflow" | "work-item"): CharterError {
  if (kind === undefined) return new CharterError("RUN_NOT_FOUND", `no run ${runId}`, { details: { runId } });
  const noun = kind === "workflow" ? "workflow run" : "work item run";
  return new CharterError("RUN_NOT_FOUND", `no ${noun} ${runId}`, { details: { runId, kind } });
}
