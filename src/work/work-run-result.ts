import type { WorkMetrics, WorkStatus } from "./work-receipt.js";

/** The seed's RunResult (its snake_case fields), plus the work item's id and the run's id. */
export interface WorkRunResult {
  readonly status: WorkStatus;
  readonly work_item_id: string;
  readonly run_id: string;
  readonly receipt_id: string;
  readonly receipt_path: string;
  /** Absolute paths. */
  readonly modified_files: readonly string[];
  readonly created_files: readonly string[];
  readonly deleted_files: readonly string[];
  /** BLAKE3 of the final state (the before state again after a rollback). */
  readonly output_hash: string;
  /** Absolute path of each created or modified file -> BLAKE3 of its content. */
  readonly artifact_hashes: Readonly<Record<string, string>>;
  readonly metrics: WorkMetrics;
  readonly test_output?: string;
  readonly proof_script?: string;
  readonly error?: string;
  readonly denial_reason?: string;
}

/** A server's work item that stopped for a person's decision on a call of its agent (no receipt yet). */
export interface WorkItemAwaitingApproval {
  readonly status: "awaiting_approval";
  readonly work_item_id: string;
  readonly run_id: string;
}
