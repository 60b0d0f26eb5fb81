import { CharterError } from "../foundation/charter-error.js";
import type { RunStore } from "../store/run-store.js";
import type { ResumeRequest } from "./run-agent-options.js";
import { currentRunOwner } from "./run-owner.js";

/**
 * Reopens the run a resume read, only if it is still as read (same status, same chain end): of two resumes of one
 * run, the one that gets there second changes nothing and is refused with RUN_NOT_RESUMABLE.
 */
export async function reopenForResume(store: RunStore, runId: string, resume: ResumeRequest): Promise<void> {
  try {
    await store.reopenRun(runId, {
      from: [resume.status],
      expected: resume.continueFrom,
      owner: currentRunOwner(),
    });
  } catch (error) {
    const reason = CharterError.isInstance(error) ? error.details.reason : undefined;
    if (reason !== "chain_mismatch" && reason !== "status_not_allowed") throw error;
    throw new CharterError(
      "RUN_NOT_RESUMABLE",
      `run ${runId} changed while this resume was starting (another resume continued it)`,
      { details: { runId, reason: "concurrent_resume" }, cause: error },
    );
  }
}
