import type { Migration } from "kysely/migration";
import { migration0001InitialSchema } from "./migration-0001-initial-schema.js";
import { migration0002RunSegments } from "./migration-0002-run-segments.js";
import { migration0003SegmentProgress } from "./migration-0003-segment-progress.js";
import { migration0004TenantCacheAndRunOwner } from "./migration-0004-tenant-cache-and-run-owner.js";
import { migration0005RunKind } from "./migration-0005-run-kind.js";
import { migration0006WorkReceipts } from "./migration-0006-work-receipts.js";
import { migration0007RunRequestsAndEvents } from "./migration-0007-run-requests-and-events.js";
import { migration0008ServerIdentity } from "./migration-0008-server-identity.js";
import { migration0009RateWindows } from "./migration-0009-rate-windows.js";
import { migration0010BudgetUsage } from "./migration-0010-budget-usage.js";

/**
 * Every migration of the run store, by name. Kysely applies them in name order and records each one it
 * applied in `charter_schema_migrations`; a migration, once released, is never edited: a change to the
 * schema is a new entry here (and a new file), and `runStoreSchemaVersion` is the number of entries.
 */
export const runStoreMigrations: Readonly<Record<string, Migration>> = Object.freeze({
  "0001_initial_schema": migration0001InitialSchema,
  "0002_run_segments": migration0002RunSegments,
  "0003_segment_progress": migration0003SegmentProgress,
  "0004_tenant_cache_and_run_owner": migration0004TenantCacheAndRunOwner,
  "0005_run_kind": migration0005RunKind,
  "0006_work_receipts": migration0006WorkReceipts,
  "0007_run_requests_and_events": migration0007RunRequestsAndEvents,
  "0008_server_identity": migration0008ServerIdentity,
  "0009_rate_windows": migration0009RateWindows,
  "0010_budget_usage": migration0010BudgetUsage,
});

/** The schema version this Charter writes: the number of migrations it knows. */
export const runStoreSchemaVersion = Object.keys(runStoreMigrations).length;

/** The table Kysely keeps the applied migrations in, and its lock table. */
export const migrationTableName = "charter_schema_migrations";
export const migrationLockTableName = "charter_schema_migrations_lock";
