import { CharterError } from "../foundation/charter-error.js";
import type { ResumeRequest } from "./run-agent-options.js";

/**
 * Refuses a resume (RUN_NOT_RESUMABLE) whose checkpoint is another run's, or whose agent, configuration or
 * overrides no longer give the contract the run started under: same contract hash or nothing. Checked before the
 * run is reopened, so that a refused resume leaves the run as it was.
 */
export function checkResumable(resume: ResumeRequest, runId: string, contractHash: string): void {
  if (resume.checkpoint.state.runId !== runId) {
    throw new CharterError("RUN_NOT_RESUMABLE", "the checkpoint belongs to another run", {
      details: { runId },
    });
  }
  if (resume.contractHash !== contractHash) {
    // Same contract hash or nothing: the agent file, configuration or overrides changed since the run started.
    throw new CharterError(
      "RUN_NOT_RESUMABLE",
      "the agent and configuration no longer give the run's contract",
      {
        details: { runId, expected: resume.contractHash, actual: contractHash },
      },
    );
  }
}
