import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * Run progress in segments: each segment (schema 2) carries its run's progress after it (chain length and
 * head, accounting and tool-result counts, totals), so that a batch no longer updates the run row. Updating that row
 * at every COMMIT cost a statement and a page written per durable turn, about a sixth of a turn on SQLite (see
 * docs/store.md, "Run progress"). The row is brought up to date when the run stops or is reopened; while it
 * runs, reads take the newest segment's progress over the row's. The columns are NULL in segments written
 * before this migration, whose batches updated the row.
 */
/** The columns the migration adds to `charter_run_segments`, in order. */
export const segmentProgressColumns: readonly (readonly [
  string,
  "text" | "integer" | "bigint" | "double precision",
])[] = [
  ["run_entry_count", "integer"],
  ["head_hash", "text"],
  ["accounting_count", "integer"],
  ["tool_result_count", "integer"],
  ["turns", "integer"],
  ["tokens_in", "bigint"],
  ["tokens_out", "bigint"],
  ["cost_usd", "double precision"],
  ["tools_used_json", "text"],
];

export const migration0003SegmentProgress: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // One statement per column: SQLite's ALTER TABLE adds one column at a time.
    for (const [name, type] of segmentProgressColumns) {
      await db.schema.alterTable("charter_run_segments").addColumn(name, type).execute();
    }
  },

  async down(db: Kysely<unknown>): Promise<void> {
    for (const [name] of [...segmentProgressColumns].reverse()) {
      await db.schema.alterTable("charter_run_segments").dropColumn(name).execute();
    }
  },
};
