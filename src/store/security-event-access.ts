import type { Kysely } from "kysely";
import { requireTenant } from "./require-tenant.js";
import type { RunStore } from "./run-store.js";
import type { SecurityEventsTable, StoreDatabase } from "./store-database.js";
import type { StoreGuard } from "./store-guard.js";
import { storeRecordVersion } from "./store-record-version.js";

export type SecurityEventAccess = Pick<
  RunStore,
  "recordSecurityEvent" | "listSecurityEvents" | "countSecurityEventsFromAddress"
>;

function fromRow(row: SecurityEventsTable) {
  return {
    eventId: row.event_id,
    tenantId: row.tenant_id,
    kind: row.kind,
    clientAddress: row.client_address,
    userId: row.user_id,
    details: JSON.parse(row.details_json) as Record<string, unknown>,
    createdAt: Number(row.created_at),
  };
}

/** Security events, recorded and listed for the store's tenant; counted by client address across tenants. */
export function createSecurityEventAccess(
  database: Kysely<StoreDatabase>,
  guard: StoreGuard,
  tenantId: string | null,
): SecurityEventAccess {
  return {
    recordSecurityEvent: (event) =>
      guard("recordSecurityEvent", { eventId: event.eventId }, async () => {
        const tenant = requireTenant(tenantId, "recordSecurityEvent");
        await database
          .insertInto("charter_security_events")
          .values({
            event_id: event.eventId,
            v: storeRecordVersion,
            tenant_id: tenant,
            kind: event.kind,
            client_address: event.clientAddress,
            user_id: event.userId,
            details_json: JSON.stringify(event.details),
            created_at: event.createdAt,
          })
          .execute();
      }),

    listSecurityEvents: (query = {}) =>
      guard("listSecurityEvents", {}, async () => {
        if (tenantId === null) return [];
        let select = database
          .selectFrom("charter_security_events")
          .selectAll()
          .where("tenant_id", "=", tenantId);
        if (query.kind !== undefined) select = select.where("kind", "=", query.kind);
        if (query.since !== undefined) select = select.where("created_at", ">=", query.since);
        const rows = await select.orderBy("created_at").orderBy("event_id").execute();
        return rows.map(fromRow);
      }),

    countSecurityEventsFromAddress: ({ clientAddress, kind, since }) =>
      guard("countSecurityEventsFromAddress", { clientAddress }, async () => {
        const row = await database
          .selectFrom("charter_security_events")
          .select((expression) => expression.fn.countAll<number>().as("count"))
          .where("client_address", "=", clientAddress)
          .where("kind", "=", kind)
          .where("created_at", ">=", since)
          .executeTakeFirstOrThrow();
        return Number(row.count);
      }),
  };
}
