import { homedir } from "node:os";
import { join } from "node:path";
import { CharterError } from "../foundation/charter-error.js";

/** The files of a run directory (see docs/transcript.md). */
export const runDirectoryLayout = {
  header: "header.json",
  contract: "contract.json",
  transcript: "transcript.jsonl",
  raw: "raw",
} as const;

const rawPayloadHashPattern = /^[0-9a-f]{64}$/;
const runIdPattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** `~/.charter/runs/<run-id>`. The run id must be a plain file name, never a path. */
export function defaultRunDirectory(runId: string, homeDirectory: string = homedir()): string {
  if (!runIdPattern.test(runId) || runId.includes("..")) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `run id ${JSON.stringify(runId)} is not a valid directory name`,
      {
        details: { runId },
      },
    );
  }
  return join(homeDirectory, ".charter", "runs", runId);
}

export function isRawPayloadHash(text: string): boolean {
  return rawPayloadHashPattern.test(text);
}

/** `raw/<hash>.json` inside the run directory. */
export function rawPayloadPath(runDirectory: string, hash: string): string {
  return join(runDirectory, runDirectoryLayout.raw, `${hash}.json`);
}
