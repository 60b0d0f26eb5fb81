import type { Insertable } from "kysely";
import type { ToolOutputInput } from "./commit-batch.js";
import type { ToolOutputsTable } from "./store-database.js";
import { storeRecordVersion } from "./store-record-version.js";

/**
 * The `charter_tool_outputs` row of a tool output kept behind a handle: one mapping for an output recorded on its
 * own and for one written with a commit batch, so that both store the same columns under the same record version.
 */
export function toolOutputRow(
  runId: string,
  output: ToolOutputInput,
  now: number,
): Insertable<ToolOutputsTable> {
  return {
    run_id: runId,
    handle: output.handle,
    v: storeRecordVersion,
    tool_name: output.toolName,
    call_id: output.callId,
    bytes: output.bytes,
    lines: output.lines,
    path: output.path,
    created_at: now,
  };
}
