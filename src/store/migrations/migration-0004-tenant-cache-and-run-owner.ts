import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * Two additions, both nullable so that rows stored before read as they did:
 *
 * - The read-only tool cache is scoped by tenant: each entry records the tenant (and the narrower scope a server
 *   may add, a role or a user) it was stored for, so that one tenant's entries can be removed on their own. The
 *   entry's key already binds both; these columns only select by them.
 * - A running run records who runs it (process id, host, the process's start time) and when that process last
 *   said it was alive, so that a run whose process is gone reads as abandoned rather than running forever.
 */
export const migration0004TenantCacheAndRunOwner: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("charter_tool_cache").addColumn("tenant_id", "text").execute();
    await db.schema.alterTable("charter_tool_cache").addColumn("scope", "text").execute();
    await db.schema
      .createIndex("charter_tool_cache_tenant")
      .on("charter_tool_cache")
      .columns(["tenant_id", "scope"])
      .execute();
    await db.schema.alterTable("charter_runs").addColumn("owner_pid", "integer").execute();
    await db.schema.alterTable("charter_runs").addColumn("owner_host", "text").execute();
    await db.schema.alterTable("charter_runs").addColumn("owner_started_at", "bigint").execute();
    await db.schema.alterTable("charter_runs").addColumn("heartbeat_at", "bigint").execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    for (const column of ["heartbeat_at", "owner_started_at", "owner_host", "owner_pid"]) {
      await db.schema.alterTable("charter_runs").dropColumn(column).execute();
    }
    await db.schema.dropIndex("charter_tool_cache_tenant").execute();
    await db.schema.alterTable("charter_tool_cache").dropColumn("scope").execute();
    await db.schema.alterTable("charter_tool_cache").dropColumn("tenant_id").execute();
  },
};
