import { CharterError } from "../foundation/charter-error.js";
import { readRawPayload, readRunDirectory } from "../transcript/read-transcript.js";
import { replayRecordedRun } from "./replay-recorded-run.js";
import type { ReplayReport } from "./replay-report.js";
import type { LiveTools } from "./replay-tool-calls.js";

/** `charter replay` over a run directory: reads the record, then replays it (see replayRecordedRun). */
export async function replayRunDirectory(
  runDirectory: string,
  options: { liveTools?: LiveTools } = {},
): Promise<ReplayReport> {
  const record = await readRunDirectory(runDirectory);
  if (record.contract === null) {
    throw new CharterError(
      "TRANSCRIPT_INVALID",
      `the run in ${runDirectory} has no contract.json to replay under`,
      {
        details: { runDirectory },
      },
    );
  }
  return replayRecordedRun(
    {
      header: record.header,
      contract: record.contract,
      entries: record.entries,
      readRaw: (hash) => readRawPayload(runDirectory, hash),
    },
    options,
  );
}
