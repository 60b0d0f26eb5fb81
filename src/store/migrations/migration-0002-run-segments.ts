import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * Run segments: what one transaction of a running run stores (its transcript entries, raw payloads,
 * accounting entries, tool results and checkpoint) as ONE row, instead of a row in each of five tables and
 * their indexes. A durable turn then writes two rows, not two dozen, which is most of its cost on SQLite
 * (see docs/store.md, "Run segments"). Runs stored before this migration keep their rows in those tables, and
 * the store reads a run from both: its older records there first, then its segments.
 */
export const migration0002RunSegments: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("charter_run_segments")
      .addColumn("run_id", "text", (column) => column.notNull())
      .addColumn("position", "integer", (column) => column.notNull())
      .addColumn("v", "integer", (column) => column.notNull())
      .addColumn("first_seq", "integer", (column) => column.notNull())
      .addColumn("entry_count", "integer", (column) => column.notNull())
      .addColumn("checkpoint_seq", "integer")
      .addColumn("raw_count", "integer", (column) => column.notNull())
      .addColumn("raw_bytes", "bigint", (column) => column.notNull())
      .addColumn("created_at", "bigint", (column) => column.notNull())
      // The large column last: SQLite reads the columns before it without following the row's overflow pages
      // through it, so reading `records` (a checkpoint, the raw payloads) does not read the entries.
      .addColumn("records", "text", (column) => column.notNull())
      .addColumn("entries", "text", (column) => column.notNull())
      .addPrimaryKeyConstraint("charter_run_segments_pk", ["run_id", "position"])
      .execute();
    await db.schema
      .alterTable("charter_runs")
      .addColumn("segment_count", "integer", (column) => column.notNull().defaultTo(0))
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("charter_runs").dropColumn("segment_count").execute();
    await db.schema.dropTable("charter_run_segments").ifExists().execute();
  },
};
