/**
 * The tables of the run store as Kysely sees them (see docs/store.md for what each column means). Every row
 * carries `v`, the format version of the record it holds; timestamps are milliseconds since the epoch.
 * JSON is kept as text, never as a JSON column type: the store hands back exactly the bytes it was given.
 */
export interface StoreDatabase {
  charter_runs: RunsTable;
  charter_run_contracts: RunContractsTable;
  charter_transcript_entries: TranscriptEntriesTable;
  charter_raw_payloads: RawPayloadsTable;
  charter_run_raw_payloads: RunRawPayloadsTable;
  charter_checkpoints: CheckpointsTable;
  charter_accounting_entries: AccountingEntriesTable;
  charter_tool_results: ToolResultsTable;
  charter_tool_outputs: ToolOutputsTable;
  charter_tool_cache: ToolCacheTable;
  charter_run_segments: RunSegmentsTable;
  charter_work_receipts: WorkReceiptsTable;
  charter_run_requests: RunRequestsTable;
  charter_run_events: RunEventsTable;
  charter_api_keys: ApiKeysTable;
  charter_idempotency_keys: IdempotencyKeysTable;
  charter_security_events: SecurityEventsTable;
  charter_tenant_configurations: TenantConfigurationsTable;
  charter_rate_windows: RateWindowsTable;
  charter_budget_usage: BudgetUsageTable;
}

/** A run a server accepted (schema 7): its request, its latest lifecycle state and its last event's number. */
export interface RunRequestsTable {
  run_id: string;
  v: number;
  tenant_id: string | null;
  conversation_id: string | null;
  request_json: string;
  state: string;
  last_sequence: number;
  cancel_requested_at: number | null;
  created_at: number;
  updated_at: number;
}

/** One lifecycle event of a server's run (schema 7), numbered from 1 per run. */
export interface RunEventsTable {
  run_id: string;
  sequence: number;
  v: number;
  tenant_id: string | null;
  type: string;
  request_id: string;
  user_id: string | null;
  correlation_id: string;
  conversation_id: string | null;
  created_at: number;
  data_json: string;
}

/** The server's API keys (schema 8): the hash of each key, never the key. */
export interface ApiKeysTable {
  key_id: string;
  v: number;
  tenant_id: string;
  user_id: string | null;
  role: string;
  name: string | null;
  secret_hash: string;
  created_at: number;
  revoked_at: number | null;
}

/** A request's `Idempotency-Key` (schema 8), unique per tenant, bound to its body's hash and its run. */
export interface IdempotencyKeysTable {
  tenant_id: string;
  idempotency_key: string;
  v: number;
  request_hash: string;
  run_id: string;
  created_at: number;
}

/** A security event (schema 8): a `tenant_scope_violation`, with the address it came from. */
export interface SecurityEventsTable {
  event_id: string;
  v: number;
  tenant_id: string;
  kind: string;
  client_address: string;
  user_id: string | null;
  details_json: string;
  created_at: number;
}

/** One tenant's configuration document (schema 8). */
export interface TenantConfigurationsTable {
  tenant_id: string;
  v: number;
  configuration_json: string;
  updated_at: number;
}

export interface WorkReceiptsTable {
  receipt_id: string;
  v: number;
  tenant_id: string | null;
  run_id: string;
  work_item_id: string;
  repository: string;
  status: string;
  receipt_hash: string;
  receipt_json: string;
  created_at: number;
}

export interface RunsTable {
  run_id: string;
  v: number;
  contract_id: string;
  contract_hash: string;
  agent_id: string;
  status: string;
  status_reason: string | null;
  outcome: string | null;
  error_code: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
  tenant_id: string | null;
  correlation_id: string | null;
  parent_run_id: string | null;
  turns: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  tools_used_json: string;
  final_report_json: string | null;
  head_hash: string;
  entry_count: number;
  accounting_count: number;
  tool_result_count: number;
  /** Segments stored for the run (schema 2; 0 for a run stored before). */
  segment_count: number;
  /** Who runs the run (schema 4; NULL before, and for runs not claimed by a process). */
  owner_pid: number | null;
  owner_host: string | null;
  /** When the owning process started (milliseconds since the epoch): tells it from a later process with its id. */
  owner_started_at: number | null;
  /** When the owning process last said it was alive. */
  heartbeat_at: number | null;
  /** `agent` or `workflow` (schema 5; rows stored before are `agent`). */
  kind: string;
}

/** A run's contract and transcript header: written once, read to verify or resume. */
export interface RunContractsTable {
  run_id: string;
  v: number;
  contract_json: string;
  header_json: string;
}

export interface TranscriptEntriesTable {
  run_id: string;
  seq: number;
  v: number;
  step_id: string;
  state: string;
  turn: number;
  timestamp: number;
  hash: string;
  /** The entry's exact canonical line (without its newline), as the transcript module wrote it. */
  line: string;
}

export interface RawPayloadsTable {
  hash: string;
  v: number;
  json: string;
  bytes: number;
  created_at: number;
}

export interface RunRawPayloadsTable {
  run_id: string;
  hash: string;
}

export interface CheckpointsTable {
  run_id: string;
  seq: number;
  v: number;
  turn: number;
  created_at: number;
  checkpoint_json: string;
}

export interface AccountingEntriesTable {
  run_id: string;
  position: number;
  v: number;
  type: string;
  turn: number;
  timestamp: number;
  entry_json: string;
}

export interface ToolResultsTable {
  run_id: string;
  position: number;
  v: number;
  turn: number;
  call_id: string;
  tool_name: string;
  server: string | null;
  request_hash: string;
  status: string;
  error_code: string | null;
  created_at: number;
  result_json: string;
}

export interface ToolOutputsTable {
  run_id: string;
  handle: string;
  v: number;
  tool_name: string;
  call_id: string;
  bytes: number;
  lines: number;
  path: string;
  created_at: number;
}

export interface ToolCacheTable {
  cache_key: string;
  v: number;
  server: string | null;
  tool: string;
  value_json: string;
  created_at: number;
  expires_at: number;
  /** The tenant the entry was stored for, and the narrower scope (a role, a user) within it (schema 4). */
  tenant_id: string | null;
  scope: string | null;
}

/**
 * One transaction of a running run (schema 2): its entries' lines and its other records (see run-segment.ts for the format, whose
 * version is `v`), with the columns reads select segments by. `first_seq` is the seq of its first entry (the
 * run's entry count when it has none); `checkpoint_seq` the seq its checkpoint covers, if it has one.
 */
export interface RunSegmentsTable {
  run_id: string;
  position: number;
  v: number;
  first_seq: number;
  entry_count: number;
  checkpoint_seq: number | null;
  raw_count: number;
  raw_bytes: number;
  created_at: number;
  records: string;
  entries: string;
  /**
   * From here on, the run's progress after this segment (schema 3; NULL in older segments, whose batches updated
   * the run row instead): what the run row would say (see run-progress.ts). `run_entry_count` is the run's entry
   * count, apart from `entry_count`, which sizes queries only.
   */
  run_entry_count: number | null;
  head_hash: string | null;
  accounting_count: number | null;
  tool_result_count: number | null;
  turns: number | null;
  tokens_in: number | null;
  tokens_out: number | null;
  cost_usd: number | null;
  tools_used_json: string | null;
}

/** A rate-limit counter: how many requests one subject made in one fixed window (schema 9). */
export interface RateWindowsTable {
  tenant_id: string;
  subject: string;
  window_start: number;
  v: number;
  count: number;
}

/** A tenant's consumption on one UTC day (schema 10): tokens and cost of its runs' model calls. */
export interface BudgetUsageTable {
  tenant_id: string;
  day_start: number;
  v: number;
  tokens: number;
  cost_usd: number;
}
