import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { InterruptedRunRecord } from "./interrupted-run-record.js";
import type { WorkLockRecord } from "./work-lock.js";
import type { WorkReceiptContent } from "./work-receipt.js";

/**
 * The failure receipt (`error: interrupted`) of an item whose process died after its before snapshot, from its lock
 * record: what the agent did is unknown (its run never ended), so no after state, no files, no metrics. The contract
 * hash and transcript head are what the run had recorded by then (`run`), null when it was never created.
 */
export function interruptedReceiptContent(
  record: WorkLockRecord,
  before: NonNullable<WorkLockRecord["before"]>,
  outputHash: string,
  environment: RuntimeEnvironment,
  run: InterruptedRunRecord | null = null,
): WorkReceiptContent {
  return {
    format: "charter-work-receipt/1",
    receipt_id: environment.newId("receipt"),
    work_item_id: String((record.work_item as { id?: unknown }).id ?? ""),
    work_item: record.work_item,
    work_item_hash: record.work_item_hash,
    agent_id: record.agent_id,
    contract_hash: run?.contractHash ?? null,
    run_id: record.run_id,
    transcript_head: run?.transcriptHead ?? null,
    status: "failure",
    error: "interrupted",
    denial_reason: null,
    before_hash: before.hash,
    before_commit: before.commit,
    after_hash: null,
    after_commit: null,
    output_hash: outputHash,
    modified_files: [],
    created_files: [],
    deleted_files: [],
    artifact_hashes: {},
    metrics: { execution_time_ms: 0, tool_ops_count: 0, delta_size: 0, files_touched: 0 },
    test_output_hash: null,
    commit: null,
    created_at: new Date(environment.now()).toISOString(),
  };
}
