import type { Kysely } from "kysely";
import type { CharterError } from "../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { TranscriptHeader } from "../transcript/transcript-entry.js";
import { createApiKeyAccess } from "./api-key-access.js";
import { createBudgetUsageAccess } from "./budget-usage-access.js";
import type { CommitBatch, RunFinish } from "./commit-batch.js";
import { exportStoredRun } from "./export-stored-run.js";
import { createIdempotencyKeyAccess } from "./idempotency-key-access.js";
import { importRunExport } from "./import-run-export.js";
import { createRateWindowAccess } from "./rate-window-access.js";
import { createRunEventAccess } from "./run-event-access.js";
import { createRunEventRangeAccess } from "./run-event-range-access.js";
import {
  createdRunProgress,
  type RunProgress,
  readRunProgress,
  runProgressOf,
  runRowProgress,
  type SegmentProgressRow,
  withProgress,
} from "./run-progress.js";
import { type RunStatus, runStatuses } from "./run-record.js";
import { createRunRecordsAccess } from "./run-records-access.js";
import { type RunSummaryRow, runSummaryColumns, toRunRecord, toRunSummary } from "./run-row.js";
import type { RunStore, RunStoreBackend } from "./run-store.js";
import { createSecurityEventAccess } from "./security-event-access.js";
import type { TransactionRunner } from "./statement-program.js";
import type { StoreDatabase } from "./store-database.js";
import { runNotFound, storeError, toStoreError } from "./store-errors.js";
import { createStoreGuard } from "./store-guard.js";
import { storeRecordVersion } from "./store-record-version.js";
import { createStoreStatements } from "./store-statements.js";
import { createTenantConfigurationAccess } from "./tenant-configuration-access.js";
import { createTenantScope } from "./tenant-scope.js";
import { tenantScopedRecords } from "./tenant-scoped-records.js";
import { createToolCacheAccess } from "./tool-cache-access.js";
import { createWorkReceiptAccess } from "./work-receipt-access.js";
import { type CommittedBatch, checkCommitBatch, commitBatchProgram } from "./write-commit-batch.js";

export interface KyselyRunStoreOptions {
  readonly database: Kysely<StoreDatabase>;
  /** Runs the multi-statement transactions (batches, imports). */
  readonly runner: TransactionRunner;
  readonly backend: RunStoreBackend;
  readonly location: string;
  readonly schemaVersion: number;
  /** The PostgreSQL schema of the tables; null for SQLite. */
  readonly postgresSchema?: string | null;
  readonly environment: RuntimeEnvironment;
  /** The tenant whose runs the store reads and writes (null, the default: the runs stored without a tenant). */
  readonly tenantId?: string | null;
}

const defaultListLimit = 50;
/** Runs whose progress a store keeps between batches: far more than run at once in one process. */
const progressCacheSize = 4096;
const maximumListLimit = 1000;
const reopenableStatuses: readonly RunStatus[] = ["running", "interrupted", "awaiting_approval"];
const stoppedStatuses: ReadonlySet<string> = new Set(runStatuses.filter((status) => status !== "running"));

/**
 * The run store over a Kysely database: the same queries for SQLite and PostgreSQL, which differ only in how
 * the database is opened (open-run-store.ts). Every query about a run is scoped by the store's tenant: another
 * tenant's run reads as one that is not stored. `forTenant` gives a view for another tenant over the same
 * database.
 */
export function createKyselyRunStore(options: KyselyRunStoreOptions): RunStore {
  const { database, environment, runner } = options;
  const lockRunRows = options.backend === "postgres";
  const statements = createStoreStatements(database, { lockRunRows });
  // The progress of the runs this store writes, after their last batch (see commitBatchProgram): a batch of a
  // run found here reads no progress. Dropped when the run stops, is reopened, or a batch of it fails. Shared by
  // the tenants' views: each checks that a run is its tenant's before it writes a batch of it.
  const progressOfRuns = new Map<string, RunProgress>();
  const { guard, close } = createStoreGuard();
  const unscopedRecords = createRunRecordsAccess(database, guard, environment);
  const closeDatabase = async () => {
    if (await close()) {
      await runner.close?.();
      await database.destroy();
    }
  };
  return scopedStore(options.tenantId ?? null, closeDatabase);

  /** The store as one tenant sees it; `closeStore` is what its `close()` does (nothing, for a view). */
  function scopedStore(tenantId: string | null, closeStore: () => Promise<void>): RunStore {
    const scope = createTenantScope(database, tenantId);
    const { allCheckpoints, ...records } = tenantScopedRecords(unscopedRecords, scope, guard);
    const ownedOrNotFound = async (runId: string) => {
      if (!(await scope.includes(runId))) throw runNotFound(runId);
    };

    async function readRun(runId: string) {
      const row = await database
        .selectFrom("charter_runs as run")
        .innerJoin("charter_run_contracts as documents", "documents.run_id", "run.run_id")
        .selectAll("run")
        .select(["documents.contract_json", "documents.header_json"])
        .where("run.run_id", "=", runId)
        .where("run.tenant_id", tenantId === null ? "is" : "=", tenantId)
        .executeTakeFirst();
      if (row === undefined) return null;
      scope.remember(runId);
      return toRunRecord(await withCurrentProgress(row), row);
    }

    /** A run row as it reads with the run's progress: a running run's newest segment may be newer. */
    async function withCurrentProgress<Row extends RunSummaryRow & { readonly segment_count: number }>(
      row: Row,
    ): Promise<Row> {
      if (row.status !== "running") return row;
      const { rows } = await database.executeQuery<SegmentProgressRow>(
        statements.newestSegmentProgress(row.run_id, Number(row.segment_count)),
      );
      const newer = rows[0];
      return newer === undefined ? row : withProgress(row, runProgressOf(row, newer));
    }

    /** Writes a batch: with the run's known progress when there is one, read afresh if that turns out stale. */
    async function writeBatch(batch: CommitBatch, finish: RunFinish | null) {
      checkCommitBatch(batch);
      const now = environment.now();
      const write = (known: RunProgress | null) =>
        runner.run(() => commitBatchProgram(statements, batch, finish, now, known));
      const known = progressOfRuns.get(batch.runId) ?? null;
      progressOfRuns.delete(batch.runId);
      let committed: CommittedBatch;
      try {
        committed = await write(known);
      } catch (error) {
        // Another writer took the segment position this batch expected: read where the run stands and try again,
        // which refuses the batch as not continuing the run (or stores it, when it does continue it).
        if (known === null || toStoreError(error, "appendCommit").details.reason !== "duplicate_record")
          throw error;
        committed = await write(null);
      }
      if (finish === null) rememberProgress(batch.runId, committed.progress);
      return committed.receipt;
    }

    function rememberProgress(runId: string, progress: RunProgress): void {
      if (progressOfRuns.size >= progressCacheSize) progressOfRuns.clear();
      progressOfRuns.set(runId, progress);
    }

    const store: RunStore = {
      backend: options.backend,
      location: options.location,
      schemaVersion: options.schemaVersion,
      postgresSchema: options.postgresSchema ?? null,
      tenantId,
      forTenant: (other) => scopedStore(other, async () => {}),

      createRun: (run) =>
        guard("createRun", { runId: run.header.run_id }, async () => {
          const { header, contract } = run;
          if (run.tenantId !== undefined && run.tenantId !== tenantId) throw tenantMismatch(run.tenantId);
          if (header.run_id.length === 0 || header.contract_hash !== contract.contract_hash) {
            throw storeError("batch_invalid", "the run's header and contract do not belong together", {
              runId: header.run_id,
              headerContractHash: header.contract_hash,
              contractHash: contract.contract_hash,
            });
          }
          const createdAt = run.createdAt ?? environment.now();
          const row = {
            run_id: header.run_id,
            v: storeRecordVersion,
            contract_id: contract.contract_id,
            contract_hash: contract.contract_hash,
            agent_id: run.agentId,
            status: "running",
            status_reason: null,
            outcome: null,
            error_code: null,
            created_at: createdAt,
            updated_at: createdAt,
            finished_at: null,
            tenant_id: tenantId,
            correlation_id: run.correlationId ?? null,
            parent_run_id: run.parentRunId ?? null,
            turns: 0,
            tokens_in: 0,
            tokens_out: 0,
            cost_usd: 0,
            tools_used_json: "[]",
            final_report_json: null,
            head_hash: header.genesis_hash,
            entry_count: 0,
            accounting_count: 0,
            tool_result_count: 0,
            segment_count: 0,
            owner_pid: run.owner?.pid ?? null,
            owner_host: run.owner?.host ?? null,
            owner_started_at: run.owner?.startedAt ?? null,
            heartbeat_at: run.owner != null ? createdAt : null,
            kind: run.kind ?? "agent",
          };
          const documents = {
            run_id: header.run_id,
            v: storeRecordVersion,
            contract_json: JSON.stringify(contract),
            header_json: JSON.stringify(header),
          };
          try {
            await runner.run(function* () {
              yield* statements.insertRows("charter_runs", [row]);
              yield* statements.insertRows("charter_run_contracts", [documents]);
            });
          } catch (error) {
            const failure = toStoreError(error, "createRun", { runId: header.run_id });
            if (failure.details.reason !== "duplicate_record") throw failure;
            throw storeError("run_exists", `run ${header.run_id} is already stored`, {
              runId: header.run_id,
            });
          }
          // Its first batch continues from here without reading the run back.
          rememberProgress(header.run_id, createdRunProgress(header.genesis_hash, createdAt));
          scope.remember(header.run_id);
          // The documents as stored (plain JSON), parsed only if asked for: the writer creating a run never does.
          let storedContract: unknown;
          let storedHeader: TranscriptHeader | undefined;
          return {
            ...toRunSummary(row),
            get contract() {
              storedContract ??= JSON.parse(documents.contract_json);
              return storedContract;
            },
            get header() {
              storedHeader ??= JSON.parse(documents.header_json) as TranscriptHeader;
              return storedHeader;
            },
          };
        }),

      appendCommit: (batch) =>
        guard("appendCommit", { runId: batch.runId }, async () => {
          await ownedOrNotFound(batch.runId);
          return writeBatch(batch, null);
        }),

      finishRun: (finish: RunFinish) =>
        guard("finishRun", { runId: finish.runId }, async () => {
          await ownedOrNotFound(finish.runId);
          if (!stoppedStatuses.has(finish.status)) {
            throw storeError("batch_invalid", `a run cannot be finished as ${finish.status}`, {
              runId: finish.runId,
              status: finish.status,
            });
          }
          return writeBatch(finish, finish);
        }),

      reopenRun: (runId, reopen = {}) =>
        guard("reopenRun", { runId }, async () => {
          await ownedOrNotFound(runId);
          const from: readonly string[] = reopen.from ?? reopenableStatuses;
          const expected = reopen.expected;
          const now = environment.now();
          progressOfRuns.delete(runId);
          await runner.run(function* () {
            const read = yield* readRunProgress(statements, runId);
            if (read === null) throw runNotFound(runId);
            const { status, progress } = read;
            if (!from.includes(status)) {
              throw storeError("status_not_allowed", `run ${runId} is ${status} and cannot be reopened`, {
                runId,
                status,
                allowed: [...from],
              });
            }
            if (
              expected !== undefined &&
              (expected.entryCount !== progress.entryCount || expected.headHash !== progress.headHash)
            ) {
              throw storeError("chain_mismatch", `run ${runId} moved on since it was read: not reopened`, {
                runId,
                expectedEntryCount: expected.entryCount,
                entryCount: progress.entryCount,
                expectedHead: expected.headHash,
                storedHead: progress.headHash,
              });
            }
            // Running again, and its row brought up to its progress: segments written from now on are newer.
            yield database
              .updateTable("charter_runs")
              .set({
                status: "running",
                status_reason: null,
                outcome: null,
                error_code: null,
                finished_at: null,
                ...runRowProgress(progress),
                updated_at: now,
                ...(reopen.owner !== undefined
                  ? {
                      owner_pid: reopen.owner.pid,
                      owner_host: reopen.owner.host,
                      owner_started_at: reopen.owner.startedAt,
                      heartbeat_at: now,
                    }
                  : {}),
              })
              .where("run_id", "=", runId)
              .compile();
          });
          const reopened = await readRun(runId);
          if (reopened === null) throw runNotFound(runId);
          return reopened;
        }),

      heartbeatRun: (runId, owner, now = environment.now()) =>
        guard("heartbeatRun", { runId }, async () => {
          const result = await database
            .updateTable("charter_runs")
            .set({ heartbeat_at: now })
            .where("run_id", "=", runId)
            .where("tenant_id", tenantId === null ? "is" : "=", tenantId)
            .where("status", "=", "running")
            .where("owner_pid", "=", owner.pid)
            .where("owner_host", "=", owner.host)
            .where("owner_started_at", "=", owner.startedAt)
            .executeTakeFirst();
          return Number(result.numUpdatedRows) > 0;
        }),

      getRun: (runId) => guard("getRun", { runId }, () => readRun(runId)),

      listRuns: (query = {}) =>
        guard("listRuns", {}, async () => {
          const limit = Math.min(Math.max(Math.trunc(query.limit ?? defaultListLimit), 1), maximumListLimit);
          // A filter for another tenant than the store's selects nothing: this store lists its tenant's runs only.
          if (query.tenantId !== undefined && query.tenantId !== tenantId) return [];
          let select = database
            .selectFrom("charter_runs")
            .select([...runSummaryColumns, "segment_count"])
            .where("tenant_id", tenantId === null ? "is" : "=", tenantId);
          if (query.status !== undefined) select = select.where("status", "=", query.status);
          if (query.agentId !== undefined) select = select.where("agent_id", "=", query.agentId);
          if (query.kind !== undefined) select = select.where("kind", "=", query.kind);
          const rows = await select
            .orderBy("created_at", "desc")
            .orderBy("run_id", "desc")
            .limit(limit)
            .offset(Math.max(Math.trunc(query.offset ?? 0), 0))
            .execute();
          const current: RunSummaryRow[] = [];
          for (const row of rows) current.push(await withCurrentProgress(row));
          return current.map(toRunSummary);
        }),

      exportRun: (runId) =>
        guard("exportRun", { runId }, async () => {
          const run = await readRun(runId);
          if (run === null) throw runNotFound(runId);
          return exportStoredRun(database, { ...records, allCheckpoints }, run, options.schemaVersion);
        }),

      importRun: (exported) =>
        guard("importRun", {}, () =>
          importRunExport(database, runner, statements, exported, environment.now(), tenantId),
        ),

      statistics: () =>
        guard("statistics", {}, async () => {
          const count = (table: keyof StoreDatabase) =>
            database
              .selectFrom(table)
              .select((expression) => expression.fn.countAll<number>().as("count"))
              .executeTakeFirstOrThrow()
              .then((row) => Number(row.count));
          const bytes = await database
            .selectFrom("charter_raw_payloads")
            .select((expression) => expression.fn.sum<number>("bytes").as("bytes"))
            .executeTakeFirstOrThrow();
          // Segments (schema 2) keep a run's payloads with the run: one copy per segment that stored it.
          const segments = await database
            .selectFrom("charter_run_segments")
            .select((expression) => [
              expression.fn.sum<number>("entry_count").as("entries"),
              expression.fn.sum<number>("raw_count").as("raw"),
              expression.fn.sum<number>("raw_bytes").as("rawBytes"),
              expression.fn.count<number>("checkpoint_seq").as("checkpoints"),
            ])
            .executeTakeFirstOrThrow();
          return {
            runs: await count("charter_runs"),
            entries: (await count("charter_transcript_entries")) + Number(segments.entries ?? 0),
            rawPayloads: (await count("charter_raw_payloads")) + Number(segments.raw ?? 0),
            rawPayloadBytes: Number(bytes.bytes ?? 0) + Number(segments.rawBytes ?? 0),
            checkpoints: (await count("charter_checkpoints")) + Number(segments.checkpoints ?? 0),
            cacheEntries: await count("charter_tool_cache"),
          };
        }),

      ...records,
      readCheckpoints: (runId) => allCheckpoints(runId),
      ...createToolCacheAccess(database, guard, environment, tenantId),
      ...createWorkReceiptAccess(database, guard, tenantId),
      ...createRunEventAccess(database, runner, guard, tenantId, () => environment.now()),
      ...createApiKeyAccess(database, guard, tenantId),
      ...createIdempotencyKeyAccess(database, guard, tenantId),
      ...createSecurityEventAccess(database, guard, tenantId),
      ...createRateWindowAccess(database, guard, tenantId),
      ...createBudgetUsageAccess(database, guard, tenantId),
      ...createRunEventRangeAccess(database, guard, tenantId),
      ...createTenantConfigurationAccess(database, guard, tenantId),

      findRunTenant: (runId) =>
        guard("findRunTenant", { runId }, async () => {
          const row =
            (await database
              .selectFrom("charter_runs")
              .select("tenant_id")
              .where("run_id", "=", runId)
              .executeTakeFirst()) ??
            // A server's run accepted and not started yet has its request only.
            (await database
              .selectFrom("charter_run_requests")
              .select("tenant_id")
              .where("run_id", "=", runId)
              .executeTakeFirst());
          return row === undefined ? undefined : { tenantId: row.tenant_id };
        }),

      close: closeStore,
    };
    return store;
  }
}

function tenantMismatch(requested: string | null): CharterError {
  return storeError(
    "tenant_mismatch",
    "the run is for another tenant than the store's: open the store (or a forTenant view) for that tenant",
    { requestedTenantId: requested },
  );
}
