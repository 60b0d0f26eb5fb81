import { CharterError } from "../foundation/charter-error.js";

/**
 * Why a store operation was refused, as `details.reason` of the CharterError it throws. The reasons are
 * stable; callers may branch on them (and on the error code), never on the message.
 */
export type StoreFailureReason =
  /** A run with this id is already stored. */
  | "run_exists"
  /** The batch does not continue the stored chain (another writer appended, or entries are missing). */
  | "chain_mismatch"
  /** The run is not `running` (finished, or awaiting approval), so nothing may be appended to it. */
  | "run_not_running"
  /** The run's status does not allow the requested change. */
  | "status_not_allowed"
  /** A record with the same key is already stored (a tool output handle, say). */
  | "duplicate_record"
  /** The batch itself is inconsistent (a checkpoint covering no COMMIT entry of the batch, say). */
  | "batch_invalid"
  /** An export document that is not a run export of a known version. */
  | "export_invalid"
  /**
   * A run or cache entry for another tenant than the store's (a store, or `forTenant` view, reads and writes
   * one tenant's runs only).
   */
  | "tenant_mismatch"
  /** The database was migrated by a newer Charter, or an export was written by one. */
  | "schema_newer"
  /** The database cannot be opened, reached or queried. */
  | "store_unavailable"
  /** A stored record cannot be read back as written (a damaged segment, say). */
  | "record_corrupt";

/**
 * The error code each reason is reported with. The conflicts and bad batches are the caller's to fix
 * (ARGUMENT_INVALID); a newer schema is a set-up problem (CONFIGURATION_INVALID); an unreachable database
 * is an internal failure. These are the closest existing codes; see docs/store.md.
 */
const codeByReason = {
  run_exists: "ARGUMENT_INVALID",
  chain_mismatch: "ARGUMENT_INVALID",
  run_not_running: "ARGUMENT_INVALID",
  status_not_allowed: "ARGUMENT_INVALID",
  duplicate_record: "ARGUMENT_INVALID",
  batch_invalid: "ARGUMENT_INVALID",
  export_invalid: "ARGUMENT_INVALID",
  tenant_mismatch: "ARGUMENT_INVALID",
  schema_newer: "CONFIGURATION_INVALID",
  store_unavailable: "INTERNAL_ERROR",
  record_corrupt: "INTERNAL_ERROR",
} as const satisfies Record<StoreFailureReason, string>;

export function storeError(
  reason: StoreFailureReason,
  message: string,
  details: Record<string, unknown> = {},
  cause?: unknown,
): CharterError {
  return new CharterError(codeByReason[reason], message, {
    details: { ...details, reason },
    ...(cause !== undefined ? { cause } : {}),
  });
}

export function runNotFound(runId: string): CharterError {
  return new CharterError("RUN_NOT_FOUND", `no stored run ${JSON.stringify(runId)}`, { details: { runId } });
}

/** A batch for a run that is no longer running (ARGUMENT_INVALID, `run_not_running`). */
export function runNotRunning(runId: string, status: string): CharterError {
  return storeError("run_not_running", `run ${runId} is ${status}: nothing can be appended`, {
    runId,
    status,
  });
}

/**
 * Turns what a database driver threw into a CharterError: CharterErrors pass through, unique-key violations
 * (SQLite `SQLITE_CONSTRAINT_PRIMARYKEY`/`_UNIQUE`, PostgreSQL `23505`) become `duplicate_record`, anything
 * else `store_unavailable`. Drivers report these as codes, so no message is read.
 */
export function toStoreError(
  error: unknown,
  operation: string,
  details: Record<string, unknown> = {},
): CharterError {
  if (CharterError.isInstance(error)) return error;
  const systemCode = (error as { code?: unknown } | null)?.code;
  const code = typeof systemCode === "string" ? systemCode : null;
  if (code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "23505") {
    return storeError(
      "duplicate_record",
      `${operation}: a record with the same key is already stored`,
      { ...details, operation, systemCode: code },
      error,
    );
  }
  return storeError(
    "store_unavailable",
    `${operation} failed in the run store`,
    { ...details, operation, systemCode: code },
    error,
  );
}
