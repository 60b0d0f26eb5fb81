import type { AccountingEntry } from "../session/accounting-entry.js";
import type { TranscriptEntry } from "../transcript/transcript-entry.js";
import type { CommitBatch, CommitReceipt, RunFinish, ToolOutputInput } from "./commit-batch.js";
import type {
  NewRunEvent,
  NewRunRequest,
  RunEventType,
  RunRequestRecord,
  StoredRunEvent,
  UnsettledRunRequest,
} from "./run-event-records.js";
import type { RunExport } from "./run-export.js";
import type { NewRun, RunOwner, RunQuery, RunRecord, RunStatus, RunSummary } from "./run-record.js";
import type {
  ApiKeyInput,
  IdempotencyClaim,
  IdempotencyClaimResult,
  SecurityEventInput,
  StoredApiKey,
  StoredSecurityEvent,
  StoredTenantConfiguration,
} from "./server-records.js";
import type {
  CheckpointRecord,
  RunStoreStatistics,
  StoredEntryLine,
  StoredEntryLineText,
  StoredRawPayload,
  ToolCacheEntry,
  ToolCachePut,
  ToolOutputRecord,
  ToolResultRecord,
} from "./stored-records.js";

export type RunStoreBackend = "sqlite" | "postgres";

export interface PageOptions {
  /** Rows per page; default 1000, at most 10000. */
  readonly pageSize?: number;
}

/**
 * Durable storage of runs: their contract and status, hash-chained transcript, raw provider payloads
 * (content-addressed, shared across runs), checkpoints, accounting, tool results and stored outputs, and the
 * read-only tool cache. Two backends implement it, SQLite and PostgreSQL, and pass the same conformance suite.
 *
 * A store reads and writes the runs of one tenant, `tenantId` (null: the default tenant, the runs stored without
 * one): every query about a run is scoped by it, so another tenant's run is answered exactly as a run that is not
 * stored (`getRun` null, no entries, no checkpoint, RUN_NOT_FOUND where an operation needs the run); `listRuns`
 * lists its tenant's runs only; new and imported runs are its tenant's; the tool cache answers its tenant's entries
 * only. `forTenant` gives another tenant's view over the same database.
 *
 * Errors are CharterErrors: RUN_NOT_FOUND for an unknown run, otherwise the codes of store-errors.ts with a
 * stable `details.reason`.
 */
export interface RunStore {
  readonly backend: RunStoreBackend;
  /** The database file, or the connection URL without its password. */
  readonly location: string;
  /** The PostgreSQL schema the store's tables live in (what a server's job queue is named after); null for SQLite. */
  readonly postgresSchema: string | null;
  /** The schema version of the database (the number of migrations applied). */
  readonly schemaVersion: number;
  /** The tenant whose runs this store reads and writes; null for the default tenant. */
  readonly tenantId: string | null;
  /**
   * The same database as another tenant sees it (null: the default tenant), sharing this store's connection:
   * for a server that serves several tenants. Closing a view does nothing; closing this store closes them all.
   */
  forTenant(tenantId: string | null): RunStore;

  /**
   * Stores a new `running` run of the store's tenant with no entries: its head is the header's genesis hash. A
   * `tenantId` other than the store's is refused (`tenant_mismatch`).
   */
  createRun(run: NewRun): Promise<RunRecord>;
  /**
   * Stores one batch in one transaction, after checking that it continues the stored chain (its first
   * entry's seq is the stored entry count and its prev_hash the stored head) and that the run is `running`.
   */
  appendCommit(batch: CommitBatch): Promise<CommitReceipt>;
  /** Stores the last batch and stops the run (status, outcome, final report), in one transaction. */
  finishRun(finish: RunFinish): Promise<CommitReceipt>;
  /**
   * Makes a stopped run `running` again (to resume it). Refuses a status outside `from` (`status_not_allowed`), and,
   * with `expected`, a run whose stored chain no longer ends there (`chain_mismatch`: another resume got there
   * first); a refused reopen changes nothing.
   */
  reopenRun(
    runId: string,
    options?: {
      readonly from?: readonly RunStatus[];
      readonly expected?: { readonly entryCount: number; readonly headHash: string };
      /** The process that continues the run: recorded as its owner, its heartbeat starting now. */
      readonly owner?: RunOwner;
    },
  ): Promise<RunRecord>;
  /**
   * Records that the run's owner is alive (`heartbeat_at`), only while the run is `running` and still owned by
   * `owner`: returns false otherwise (it stopped, or another process took it over). One statement, on a timer.
   */
  heartbeatRun(runId: string, owner: RunOwner, now?: number): Promise<boolean>;

  getRun(runId: string): Promise<RunRecord | null>;
  listRuns(query?: RunQuery): Promise<RunSummary[]>;
  /**
   * The stored lines in seq order, a page (default 1000 lines) at a time, so that a reader of a long
   * transcript pays one await per page rather than per line; `fromSeq` skips the entries before it.
   */
  readEntryLines(
    runId: string,
    options?: PageOptions & { readonly fromSeq?: number },
  ): AsyncIterable<readonly StoredEntryLine[]>;
  /**
   * The stored lines' texts alone, in seq order, a page at a time: what verification reads, without the
   * columns it would only throw away (a fraction of the cost of reading a long transcript); `fromSeq` skips
   * the entries before it.
   */
  readEntryLineTexts(
    runId: string,
    options?: PageOptions & { readonly fromSeq?: number },
  ): AsyncIterable<readonly StoredEntryLineText[]>;
  /** The stored entries in seq order, parsed. */
  readEntries(runId: string, options?: { readonly fromSeq?: number }): AsyncIterable<TranscriptEntry>;
  /** A raw payload the run stored, by content hash: its canonical JSON. */
  readRaw(runId: string, hash: string): Promise<string | null>;
  /**
   * The raw payloads a run stored, each once, a page (at most `pageSize`) at a time: those in the schema 1 tables
   * in hash order, then those of its segments in the order they were committed.
   */
  readRunRawPayloads(runId: string, options?: PageOptions): AsyncIterable<readonly StoredRawPayload[]>;
  /** The checkpoint with the highest seq, or null before the first COMMIT. */
  latestCheckpoint(runId: string): Promise<CheckpointRecord | null>;
  readCheckpoint(runId: string, seq: number): Promise<CheckpointRecord | null>;
  /** Every checkpoint of the run, in the order stored (verification holds each to the chain). */
  readCheckpoints(runId: string): Promise<CheckpointRecord[]>;
  readAccounting(runId: string): Promise<AccountingEntry[]>;
  /** A run's tool results in commit order; with `requestHash`, only the results of that request. */
  readToolResults(runId: string, options?: { readonly requestHash?: string }): Promise<ToolResultRecord[]>;

  /** Records an oversized output stored behind a handle, outside a batch. */
  recordToolOutput(runId: string, output: ToolOutputInput): Promise<void>;
  listToolOutputs(runId: string): Promise<ToolOutputRecord[]>;

  /**
   * The cached entry of the store's tenant when `now < expiresAt` (now defaults to the store's clock), else null.
   */
  cacheGet(key: string, now?: number): Promise<ToolCacheEntry | null>;
  /** Stores or replaces the cached entry for the key, for the store's tenant (another is `tenant_mismatch`). */
  cachePut(entry: ToolCachePut): Promise<void>;
  /** Deletes the entries expired at `now`, every tenant's (upkeep: it reads nothing); returns how many. */
  cachePurgeExpired(now?: number): Promise<number>;
  /**
   * Deletes every entry stored for the tenant (`null`: the entries stored for no tenant), expired or not, or with
   * `scope`, only those of that scope within it, and with `server`, only those of that tool source (an MCP server's
   * name, `rest` for the REST tools, null for function tools); returns how many. Other tenants' entries are
   * untouched. Upkeep after an incident, and the invalidation a write through a source makes: it takes the tenant
   * it purges, whatever the store's, and reads nothing.
   */
  cachePurgeTenant(
    tenantId: string | null,
    options?: { readonly scope?: string | null; readonly server?: string | null },
  ): Promise<number>;

  /**
   * Stores a work item's receipt for the store's tenant (its document as given, with the columns it is found by);
   * a receipt id already stored is refused (`receipts are never rewritten`).
   */
  putWorkReceipt(receipt: WorkReceiptInput): Promise<void>;
  /** A receipt of the store's tenant by its receipt id, or null (another tenant's reads as absent). */
  getWorkReceipt(receiptId: string): Promise<StoredWorkReceipt | null>;
  /**
   * The store's tenant's receipts, oldest first (`newestFirst`: newest first); with `repository`, `runId` or
   * `status`, only those; `limit` and `offset` page through them.
   */
  listWorkReceipts(query?: WorkReceiptQuery): Promise<StoredWorkReceipt[]>;

  /**
   * Stores a run a server accepted, for the store's tenant: its request (JSON) and its REQUESTED event (number 1),
   * in one transaction, before the run itself exists. A run id already stored is refused (`run_exists`).
   */
  createRunRequest(request: NewRunRequest): Promise<StoredRunEvent>;
  /** The request of one of the tenant's server runs, with its lifecycle state; null otherwise. */
  getRunRequest(runId: string): Promise<RunRequestRecord | null>;
  /**
   * Appends a lifecycle event to one of the tenant's server runs, numbered one after the last; refuses a run with
   * no stored request, or whose lifecycle is over (COMPLETED or FAILED stored: `run_not_running`). The request's
   * state becomes the event's type (a TOOL_CALL leaves it).
   */
  appendRunEvent(event: NewRunEvent): Promise<StoredRunEvent>;
  /**
   * A server run's events in order, those after `afterSequence` only (a reader resuming after the last it saw),
   * at most `limit` (default 1000). Another tenant's run has none.
   */
  readRunEvents(
    runId: string,
    options?: { readonly afterSequence?: number; readonly limit?: number },
  ): Promise<StoredRunEvent[]>;
  /**
   * The store's tenant's lifecycle events of the given types stored in `[from, to)`, across runs, ordered by time,
   * run and sequence; `after` (the last event of the previous page) continues, `limit` (default and at most 5000)
   * bounds a page.
   */
  listRunEventsInRange(query: {
    readonly types: readonly RunEventType[];
    readonly from: number;
    readonly to: number;
    readonly after?: { readonly createdAt: number; readonly runId: string; readonly sequence: number };
    readonly limit?: number;
  }): Promise<StoredRunEvent[]>;
  /**
   * The tenant's server runs accepted but not started yet (no run row, lifecycle not over), newest first: the
   * runs waiting in the queue for a worker. With `started`, also those a worker has started (a run row exists):
   * every run of the tenant whose lifecycle is not over.
   */
  listQueuedRunRequests(options?: {
    readonly limit?: number;
    readonly started?: boolean;
  }): Promise<RunRequestRecord[]>;
  /** The tenant's server runs of one conversation, oldest first. */
  listConversationRequests(conversationId: string): Promise<RunRequestRecord[]>;
  /**
   * Records that the run's cancellation was asked for (whoever executes it stops it at its next checkpoint): false
   * when the tenant has no such unfinished run.
   */
  requestRunCancel(runId: string, now?: number): Promise<boolean>;
  /**
   * Upkeep over every tenant (it reads run ids and states, nothing of any run's content): the server runs whose
   * lifecycle is not over, oldest first, with their run row's status and owner, so that a worker can continue those
   * whose process is gone.
   */
  listUnsettledRunRequests(options?: { readonly limit?: number }): Promise<UnsettledRunRequest[]>;
  /**
   * Makes `owner` the owner of one of the tenant's `running` runs whose heartbeat is older than `heartbeatBefore`
   * (its process died, or stopped saying it is alive), its heartbeat now: true for the one caller that took it.
   */
  takeOverRun(
    runId: string,
    takeOver: { readonly owner: RunOwner; readonly heartbeatBefore: number; readonly now?: number },
  ): Promise<boolean>;

  /**
   * The tenant a run (or a server's run request not started yet) is stored for, whichever tenant's view asks, or
   * undefined when no tenant has the run. The one
   * read of a run across tenants: the server tells a request for another tenant's run (a violation it records)
   * from a mistaken id with it, and never answers with what it reads.
   */
  findRunTenant(runId: string): Promise<{ readonly tenantId: string | null } | undefined>;

  /** Stores an API key (its hash) for the store's tenant; a store of the default tenant is refused. */
  createApiKey(key: ApiKeyInput): Promise<void>;
  /**
   * An API key by its id, whatever its tenant (a key is what tells the server the tenant), or null; revoked keys
   * included, with `revokedAt`.
   */
  findApiKey(keyId: string): Promise<StoredApiKey | null>;
  /** The store's tenant's keys, oldest first, revoked ones included. */
  listApiKeys(): Promise<StoredApiKey[]>;
  /** Revokes a key of the store's tenant; false when the tenant has no such key not yet revoked. */
  revokeApiKey(keyId: string, revokedAt: number): Promise<boolean>;

  /**
   * Claims an Idempotency-Key for the store's tenant: the first claim stores it (`claimed: true`); every later one,
   * concurrent ones included, gets what the first stored. Unique in the database, not in a process.
   */
  claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyClaimResult>;
  /** Forgets a claim whose run could not be accepted, so a retry starts afresh (only the claim for that run). */
  releaseIdempotencyKey(idempotencyKey: string, runId: string): Promise<void>;

  /** Records a security event (a tenant scope violation) for the store's tenant, the caller's. */
  recordSecurityEvent(event: SecurityEventInput): Promise<void>;
  /** The store's tenant's security events, oldest first. */
  listSecurityEvents(query?: {
    readonly kind?: string;
    readonly since?: number;
  }): Promise<StoredSecurityEvent[]>;
  /** How many events of a kind came from one client address since a time, every tenant's (to block an address). */
  countSecurityEventsFromAddress(query: {
    readonly clientAddress: string;
    readonly kind: string;
    readonly since: number;
  }): Promise<number>;

  /**
   * Counts one request of a rate-limited subject in the window starting at `windowStart` and answers the window's
   * count with it, atomically across every process on the store (the store's tenant's subject; on a store of no
   * tenant, a subject of no tenant, such as a client address). When a subject opens a new window, the
   * tenant's windows (of every subject) that started before `expiredBefore` are forgotten.
   */
  countInRateWindow(query: {
    readonly subject: string;
    readonly windowStart: number;
    readonly expiredBefore: number;
  }): Promise<number>;

  /**
   * Adds what a model call of the store's tenant consumed to its UTC day's usage (`dayStart`: 00:00 UTC of the day,
   * in milliseconds), atomically across every process on the store.
   */
  addBudgetUsage(usage: {
    readonly dayStart: number;
    readonly tokens: number;
    readonly costUsd: number;
  }): Promise<void>;
  /** The store's tenant's usage over the days that start in `[from, to)` (a day or a month): zero when none. */
  readBudgetUsage(period: { readonly from: number; readonly to: number }): Promise<{
    readonly tokens: number;
    readonly costUsd: number;
  }>;

  /** Stores (replaces) the store's tenant's configuration document. */
  putTenantConfiguration(configuration: unknown, updatedAt: number): Promise<void>;
  /** The store's tenant's configuration document, or null when none is stored. */
  getTenantConfiguration(): Promise<StoredTenantConfiguration | null>;

  /** Everything stored for a run, in the versioned export format (fixtures, backups, moving a run). */
  exportRun(runId: string): Promise<RunExport>;
  /**
   * Stores a run from an export of any supported version, in one transaction; refuses an existing run id, and a run
   * of another tenant than the store's (`tenant_mismatch`).
   */
  importRun(exported: unknown): Promise<RunRecord>;

  /** Counts over the whole database, every tenant's (sizes only, nothing of any run). */
  statistics(): Promise<RunStoreStatistics>;
  /** Waits for running operations and closes the database; the store accepts nothing afterwards. */
  close(): Promise<void>;
}

/** A filter for `listWorkReceipts`. */
export interface WorkReceiptQuery {
  readonly repository?: string;
  /** The item's run (the receipt's `run_id`). */
  readonly runId?: string;
  readonly status?: string;
  readonly newestFirst?: boolean;
  readonly limit?: number;
  readonly offset?: number;
}

/** A work item receipt to store: its document (JSON-serialisable) and the fields it is found by. */
export interface WorkReceiptInput {
  readonly receiptId: string;
  readonly runId: string;
  readonly workItemId: string;
  /** The repository's working tree (absolute path) the item ran in. */
  readonly repository: string;
  readonly status: string;
  readonly receiptHash: string;
  readonly receipt: unknown;
  readonly createdAt: number;
}

export interface StoredWorkReceipt extends WorkReceiptInput {
  readonly tenantId: string | null;
}
