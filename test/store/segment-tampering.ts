import Database from "better-sqlite3";
import { expect } from "vitest";
import type { StoreTampering } from "./store-harness.js";

/** A run segment's row as the tampering helpers read and rewrite it. */
export interface SegmentRow {
  readonly run_id: string;
  readonly position: number;
  readonly first_seq: number;
  readonly entry_count: number;
  readonly records: string;
  readonly entries: string;
}

/** A backend's raw access to the segments table, behind the store's back (another process's connection). */
export interface SegmentTable {
  /** Every segment row; of one run when `runId` is given. */
  read(runId: string | null): Promise<SegmentRow[]>;
  write(row: SegmentRow): Promise<void>;
}

/**
 * Damage done to what a run stored in segments (run-segment.ts): the same damage as to the rows of the older
 * tables, so that the conformance suite asks the same of both: verification finds it.
 */
export function segmentTampering(table: SegmentTable): Omit<
  StoreTampering,
  "recordMigration" | "setRunColumn"
> & {
  entryLine(runId: string, seq: number): Promise<string>;
} {
  async function holding(runId: string, seq: number) {
    const rows = await table.read(runId);
    const row = rows.find((each) => each.first_seq <= seq && seq < each.first_seq + each.entry_count);
    expect(row, `a segment of ${runId} holds entry ${seq}`).toBeDefined();
    const lines = (row as SegmentRow).entries.split("\n");
    return { row: row as SegmentRow, lines, at: seq - (row as SegmentRow).first_seq };
  }
  return {
    async entryLine(runId, seq) {
      const { lines, at } = await holding(runId, seq);
      return lines[at] as string;
    },
    async replaceEntryLine(runId, seq, line) {
      const { row, lines, at } = await holding(runId, seq);
      lines[at] = line;
      await table.write({ ...row, entries: lines.join("\n") });
    },
    async deleteEntry(runId, seq) {
      const { row, lines, at } = await holding(runId, seq);
      lines.splice(at, 1);
      await table.write({ ...row, entry_count: row.entry_count - 1, entries: lines.join("\n") });
    },
    async miscountSegment(runId, seq, entryCount) {
      const { row } = await holding(runId, seq);
      await table.write({ ...row, entry_count: entryCount });
    },
    async shiftEntrySeqs(runId, fromSeq, offset) {
      // A segment numbers its entries from its first_seq: only whole segments can be renumbered.
      for (const row of await table.read(runId)) {
        if (row.first_seq >= fromSeq) await table.write({ ...row, first_seq: row.first_seq + offset });
        else expect(row.first_seq + row.entry_count <= fromSeq, "shift at a segment boundary").toBe(true);
      }
    },
    async editRecords(runId, tag, search, replacement) {
      let edited = 0;
      for (const row of await table.read(runId)) {
        const lines = row.records.split("\n");
        let changed = false;
        for (const [index, line] of lines.entries()) {
          if (!line.startsWith(tag) || !line.includes(search)) continue;
          lines[index] = line.split(search).join(replacement);
          changed = true;
          edited++;
        }
        if (changed) await table.write({ ...row, records: lines.join("\n") });
      }
      return edited;
    },
    async replaceRawPayload(hash, json) {
      for (const row of await table.read(null)) {
        const lines = row.records.split("\n");
        const at = lines.findIndex((line) => line.startsWith(`R${hash} `));
        if (at === -1) continue;
        lines[at] = `R${hash} ${json}`;
        await table.write({ ...row, records: lines.join("\n") });
      }
    },
  };
}

/** The segments table of a SQLite store file, through a connection of its own (as another process would). */
export function sqliteSegmentTable(path: string): SegmentTable {
  const withDatabase = <T>(work: (database: Database.Database) => T): Promise<T> => {
    const database = new Database(path);
    try {
      return Promise.resolve(work(database));
    } finally {
      database.close();
    }
  };
  return {
    read: (runId) =>
      withDatabase(
        (database) =>
          (runId === null
            ? database.prepare("select * from charter_run_segments").all()
            : database
                .prepare("select * from charter_run_segments where run_id = ? order by position")
                .all(runId)) as SegmentRow[],
      ),
    write: (row) =>
      withDatabase((database) => {
        database
          .prepare(
            "update charter_run_segments set first_seq = ?, entry_count = ?, records = ?, entries = ? where run_id = ? and position = ?",
          )
          .run(row.first_seq, row.entry_count, row.records, row.entries, row.run_id, row.position);
      }),
  };
}
