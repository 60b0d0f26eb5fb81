import type { Selectable } from "kysely";
import type { RunEventType, StoredRunEvent } from "./run-event-records.js";
import type { RunEventsTable } from "./store-database.js";

/**
 * A lifecycle event as the store answers it, from its `charter_run_events` row: one mapping for every read (a
 * run's events, an event just appended, events across runs in a time range), so that they all answer the same shape.
 */
export function runEventFromRow(row: Selectable<RunEventsTable>): StoredRunEvent {
  return {
    runId: row.run_id,
    sequence: Number(row.sequence),
    tenantId: row.tenant_id,
    type: row.type as RunEventType,
    requestId: row.request_id,
    userId: row.user_id,
    correlationId: row.correlation_id,
    conversationId: row.conversation_id,
    createdAt: Number(row.created_at),
    data: JSON.parse(row.data_json) as Record<string, unknown>,
  };
}
