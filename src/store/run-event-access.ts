import type { Kysely, Selectable } from "kysely";
import { runEventFromRow } from "./run-event-from-row.js";
import {
  type NewRunEvent,
  type RunEventType,
  type RunRequestRecord,
  runEventTypes,
  settledRunEventTypes,
  type UnsettledRunRequest,
} from "./run-event-records.js";
import type { RunStore } from "./run-store.js";
import type { TransactionRunner } from "./statement-program.js";
import type { RunEventsTable, RunRequestsTable, StoreDatabase } from "./store-database.js";
import { storeError, toStoreError } from "./store-errors.js";
import type { StoreGuard } from "./store-guard.js";
import { storeRecordVersion } from "./store-record-version.js";

export type RunEventAccess = Pick<
  RunStore,
  | "createRunRequest"
  | "getRunRequest"
  | "appendRunEvent"
  | "readRunEvents"
  | "listConversationRequests"
  | "listQueuedRunRequests"
  | "requestRunCancel"
  | "listUnsettledRunRequests"
  | "takeOverRun"
>;

const defaultEventPage = 1000;
const maximumEventPage = 10_000;
const knownTypes: ReadonlySet<string> = new Set(runEventTypes);

function requestFromRow(row: Selectable<RunRequestsTable>): RunRequestRecord {
  return {
    runId: row.run_id,
    tenantId: row.tenant_id,
    conversationId: row.conversation_id,
    request: JSON.parse(row.request_json) as unknown,
    state: row.state as RunEventType,
    lastSequence: Number(row.last_sequence),
    cancelRequestedAt: row.cancel_requested_at === null ? null : Number(row.cancel_requested_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function checkType(type: string): void {
  if (!knownTypes.has(type)) {
    throw storeError("batch_invalid", `${type} is not a lifecycle event type`, {
      type,
      known: [...runEventTypes],
    });
  }
}

/**
 * The requests and lifecycle events of the runs a server executes, every query scoped by the store's tenant (the
 * upkeep `listUnsettledRunRequests` aside, which reads every tenant's run ids to continue abandoned runs). An
 * event's number is taken from its request row in the event's own transaction (`last_sequence + 1`, an update
 * that locks the row), so two writers of one run's events never give one number twice.
 */
export function createRunEventAccess(
  database: Kysely<StoreDatabase>,
  runner: TransactionRunner,
  guard: StoreGuard,
  tenantId: string | null,
  now: () => number,
): RunEventAccess {
  const tenantFilter = tenantId === null ? ("is" as const) : ("=" as const);

  function eventRow(event: NewRunEvent, sequence: number, createdAt: number): RunEventsTable {
    return {
      run_id: event.runId,
      sequence,
      v: storeRecordVersion,
      tenant_id: tenantId,
      type: event.type,
      request_id: event.requestId,
      user_id: event.userId,
      correlation_id: event.correlationId,
      conversation_id: event.conversationId,
      created_at: createdAt,
      data_json: JSON.stringify(event.data),
    };
  }

  return {
    createRunRequest: (input) =>
      guard("createRunRequest", { runId: input.event.runId }, async () => {
        const createdAt = input.createdAt ?? now();
        const event: NewRunEvent = { ...input.event, type: "REQUESTED", createdAt };
        const row = eventRow(event, 1, createdAt);
        try {
          await runner.run(function* () {
            yield database
              .insertInto("charter_run_requests")
              .values({
                run_id: event.runId,
                v: storeRecordVersion,
                tenant_id: tenantId,
                conversation_id: event.conversationId,
                request_json: JSON.stringify(input.request),
                state: "REQUESTED",
                last_sequence: 1,
                cancel_requested_at: null,
                created_at: createdAt,
                updated_at: createdAt,
              })
              .compile();
            yield database.insertInto("charter_run_events").values(row).compile();
          });
        } catch (error) {
          const failure = toStoreError(error, "createRunRequest", { runId: event.runId });
          if (failure.details.reason !== "duplicate_record") throw failure;
          throw storeError("run_exists", `run ${event.runId} is already stored`, { runId: event.runId });
        }
        return runEventFromRow(row);
      }),

    getRunRequest: (runId) =>
      guard("getRunRequest", { runId }, async () => {
        const row = await database
          .selectFrom("charter_run_requests")
          .selectAll()
          .where("run_id", "=", runId)
          .where("tenant_id", tenantFilter, tenantId)
          .executeTakeFirst();
        return row === undefined ? null : requestFromRow(row);
      }),

    appendRunEvent: (event) =>
      guard("appendRunEvent", { runId: event.runId, type: event.type }, async () => {
        checkType(event.type);
        const createdAt = event.createdAt ?? now();
        const stored = await runner.run(function* () {
          const numbered = (yield database
            .updateTable("charter_run_requests")
            .set((expression) => ({
              last_sequence: expression("last_sequence", "+", 1),
              // A TOOL_CALL happens within EXECUTING: the state stays the phase the run is in.
              ...(event.type === "TOOL_CALL" ? {} : { state: event.type }),
              updated_at: createdAt,
            }))
            .where("run_id", "=", event.runId)
            .where("tenant_id", tenantFilter, tenantId)
            // Nothing follows COMPLETED or FAILED: a late writer (a run cancelled while it started) is refused.
            .where("state", "not in", settledRunEventTypes)
            .returning(["last_sequence"])
            .compile())[0] as { last_sequence: number } | undefined;
          if (numbered === undefined) return null;
          const row = eventRow(event, Number(numbered.last_sequence), createdAt);
          yield database.insertInto("charter_run_events").values(row).compile();
          return row;
        });
        if (stored === null) {
          throw storeError(
            "run_not_running",
            `run ${event.runId} has no stored request, or its lifecycle is over: no event appended`,
            {
              runId: event.runId,
            },
          );
        }
        return runEventFromRow(stored);
      }),

    readRunEvents: (runId, options = {}) =>
      guard("readRunEvents", { runId }, async () => {
        const limit = Math.min(Math.max(Math.trunc(options.limit ?? defaultEventPage), 1), maximumEventPage);
        const rows = await database
          .selectFrom("charter_run_events")
          .selectAll()
          .where("run_id", "=", runId)
          .where("tenant_id", tenantFilter, tenantId)
          .where("sequence", ">", Math.max(Math.trunc(options.afterSequence ?? 0), 0))
          .orderBy("sequence")
          .limit(limit)
          .execute();
        return rows.map(runEventFromRow);
      }),

    listConversationRequests: (conversationId) =>
      guard("listConversationRequests", { conversationId }, async () => {
        const rows = await database
          .selectFrom("charter_run_requests")
          .selectAll()
          .where("tenant_id", tenantFilter, tenantId)
          .where("conversation_id", "=", conversationId)
          .orderBy("created_at")
          .orderBy("run_id")
          .execute();
        return rows.map(requestFromRow);
      }),

    listQueuedRunRequests: (options = {}) =>
      guard("listQueuedRunRequests", {}, async () => {
        let query = database
          .selectFrom("charter_run_requests as request")
          .leftJoin("charter_runs as run", "run.run_id", "request.run_id")
          .selectAll("request")
          .where("request.tenant_id", tenantFilter, tenantId)
          .where("request.state", "not in", settledRunEventTypes);
        if (options.started !== true) query = query.where("run.run_id", "is", null);
        const rows = await query
          .orderBy("request.created_at", "desc")
          .orderBy("request.run_id", "desc")
          .limit(Math.min(Math.max(Math.trunc(options.limit ?? 100), 1), 1000))
          .execute();
        return rows.map(requestFromRow);
      }),

    requestRunCancel: (runId, at = now()) =>
      guard("requestRunCancel", { runId }, async () => {
        const result = await database
          .updateTable("charter_run_requests")
          .set({ cancel_requested_at: at })
          .where("run_id", "=", runId)
          .where("tenant_id", tenantFilter, tenantId)
          .where("state", "not in", settledRunEventTypes)
          .where("cancel_requested_at", "is", null)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) > 0) return true;
        // Asked already and not yet settled: still an unfinished run of the tenant.
        const row = await database
          .selectFrom("charter_run_requests")
          .select("run_id")
          .where("run_id", "=", runId)
          .where("tenant_id", tenantFilter, tenantId)
          .where("state", "not in", settledRunEventTypes)
          .executeTakeFirst();
        return row !== undefined;
      }),

    listUnsettledRunRequests: (options = {}) =>
      guard("listUnsettledRunRequests", {}, async () => {
        const rows = await database
          .selectFrom("charter_run_requests as request")
          .leftJoin("charter_runs as run", "run.run_id", "request.run_id")
          .select([
            "request.run_id",
            "request.tenant_id",
            "request.state",
            "request.cancel_requested_at",
            "request.created_at",
            "run.status",
            "run.owner_pid",
            "run.owner_host",
            "run.owner_started_at",
            "run.heartbeat_at",
          ])
          .where("request.state", "not in", settledRunEventTypes)
          .orderBy("request.created_at")
          .orderBy("request.run_id")
          .limit(Math.min(Math.max(Math.trunc(options.limit ?? 1000), 1), 10_000))
          .execute();
        return rows.map(
          (row): UnsettledRunRequest => ({
            runId: row.run_id,
            tenantId: row.tenant_id,
            state: row.state as RunEventType,
            cancelRequestedAt: row.cancel_requested_at === null ? null : Number(row.cancel_requested_at),
            createdAt: Number(row.created_at),
            run:
              row.status === null
                ? null
                : {
                    status: row.status,
                    owner:
                      row.owner_pid === null || row.owner_host === null || row.owner_started_at === null
                        ? null
                        : {
                            pid: Number(row.owner_pid),
                            host: row.owner_host,
                            startedAt: Number(row.owner_started_at),
                          },
                    heartbeatAt: row.heartbeat_at === null ? null : Number(row.heartbeat_at),
                  },
          }),
        );
      }),

    takeOverRun: (runId, takeOver) =>
      guard("takeOverRun", { runId }, async () => {
        const at = takeOver.now ?? now();
        const result = await database
          .updateTable("charter_runs")
          .set({
            owner_pid: takeOver.owner.pid,
            owner_host: takeOver.owner.host,
            owner_started_at: takeOver.owner.startedAt,
            heartbeat_at: at,
          })
          .where("run_id", "=", runId)
          .where("tenant_id", tenantFilter, tenantId)
          .where("status", "=", "running")
          // A run that never recorded a heartbeat (no owner) is never taken as abandoned, as in `runs list`.
          .where("heartbeat_at", "<", takeOver.heartbeatBefore)
          .executeTakeFirst();
        return Number(result.numUpdatedRows) > 0;
      }),
  };
}
