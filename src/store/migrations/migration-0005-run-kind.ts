import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * Runs have a kind: `agent` (one session, every run stored before) or `workflow` (a workflow run, whose transcript
 * records its steps and whose checkpoints are the workflow's; its steps' runs name it as their parent). Rows stored
 * before read as `agent`.
 */
export const migration0005RunKind: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable("charter_runs")
      .addColumn("kind", "text", (column) => column.notNull().defaultTo("agent"))
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("charter_runs").dropColumn("kind").execute();
  },
};
