import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * What the server (`charter serve`) keeps beside the runs, every row for one tenant:
 *
 * - API keys: only the hash of each key (the key itself is shown once, when made), its tenant, role, user and
 *   name, and when it was revoked.
 * - Idempotency keys: the `Idempotency-Key` a request carried, bound to the hash of its body and the run it
 *   started. The primary key (tenant, key) is what makes twenty concurrent retries start one run: the database,
 *   not the process, decides which insert wins.
 * - Security events: each `tenant_scope_violation` (a request for another tenant's run), with the client address
 *   it came from, counted to block an address.
 * - Tenant configurations: one JSON document per tenant (allowed agents, provider and model overrides, provider
 *   keys).
 */
export const migration0008ServerIdentity: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("charter_api_keys")
      .addColumn("key_id", "text", (column) => column.primaryKey())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("tenant_id", "text", (column) => column.notNull())
      .addColumn("user_id", "text")
      .addColumn("role", "text", (column) => column.notNull())
      .addColumn("name", "text")
      .addColumn("secret_hash", "text", (column) => column.notNull())
      .addColumn("created_at", "bigint", (column) => column.notNull())
      .addColumn("revoked_at", "bigint")
      .execute();
    await db.schema
      .createIndex("charter_api_keys_tenant")
      .on("charter_api_keys")
      .columns(["tenant_id"])
      .execute();

    await db.schema
      .createTable("charter_idempotency_keys")
      .addColumn("tenant_id", "text", (column) => column.notNull())
      .addColumn("idempotency_key", "text", (column) => column.notNull())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("request_hash", "text", (column) => column.notNull())
      .addColumn("run_id", "text", (column) => column.notNull())
      .addColumn("created_at", "bigint", (column) => column.notNull())
      .addPrimaryKeyConstraint("charter_idempotency_keys_primary", ["tenant_id", "idempotency_key"])
      .execute();

    await db.schema
      .createTable("charter_security_events")
      .addColumn("event_id", "text", (column) => column.primaryKey())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("tenant_id", "text", (column) => column.notNull())
      .addColumn("kind", "text", (column) => column.notNull())
      .addColumn("client_address", "text", (column) => column.notNull())
      .addColumn("user_id", "text")
      .addColumn("details_json", "text", (column) => column.notNull())
      .addColumn("created_at", "bigint", (column) => column.notNull())
      .execute();
    await db.schema
      .createIndex("charter_security_events_address")
      .on("charter_security_events")
      .columns(["client_address", "kind", "created_at"])
      .execute();
    await db.schema
      .createIndex("charter_security_events_tenant")
      .on("charter_security_events")
      .columns(["tenant_id", "created_at"])
      .execute();

    await db.schema
      .createTable("charter_tenant_configurations")
      .addColumn("tenant_id", "text", (column) => column.primaryKey())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("configuration_json", "text", (column) => column.notNull())
      .addColumn("updated_at", "bigint", (column) => column.notNull())
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable("charter_tenant_configurations").execute();
    await db.schema.dropIndex("charter_security_events_tenant").execute();
    await db.schema.dropIndex("charter_security_events_address").execute();
    await db.schema.dropTable("charter_security_events").execute();
    await db.schema.dropTable("charter_idempotency_keys").execute();
    await db.schema.dropIndex("charter_api_keys_tenant").execute();
    await db.schema.dropTable("charter_api_keys").execute();
  },
};
