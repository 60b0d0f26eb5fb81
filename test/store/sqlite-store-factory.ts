import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { openRunStore } from "../../src/store/open-run-store.js";
import type { RunStore } from "../../src/store/run-store.js";
import { segmentTampering, sqliteSegmentTable } from "./segment-tampering.js";
import { newTestEnvironment, type RunStoreFactory, type StoreUnderTest } from "./store-harness.js";

/**
 * A fresh SQLite file per test, in its own temporary directory. The WAL is checkpointed in the background every
 * two commits (the default is 200), so that the whole suite, and the kill -9 test, run with checkpoints under way.
 */
export const sqliteStoreFactory: RunStoreFactory = async (): Promise<StoreUnderTest> => {
  const directory = await mkdtemp(join(tmpdir(), "charter-store-"));
  const path = join(directory, "charter.db");
  const environment = newTestEnvironment();
  const opened: RunStore[] = [];
  const location = { path, sqlite: { backgroundCheckpointCommits: 2 } };
  const open = async () => {
    const store = await openRunStore({ ...location, environment });
    opened.push(store);
    return store;
  };
  const store = await open();
  // A second connection, as another process would have, for damaging the file behind the store's back.
  const withDatabase = (work: (database: Database.Database) => void) => {
    const database = new Database(path);
    try {
      work(database);
    } finally {
      database.close();
    }
    return Promise.resolve();
  };
  return {
    store,
    environment,
    location,
    reopen: open,
    tamper: {
      ...segmentTampering(sqliteSegmentTable(path)),
      // The column is one of three names the caller chose, never input.
      setRunColumn: (runId, column, value) =>
        withDatabase((database) => {
          database.prepare(`update charter_runs set ${column} = ? where run_id = ?`).run(value, runId);
        }),
      recordMigration: (name) =>
        withDatabase((database) => {
          database
            .prepare("insert into charter_schema_migrations (name, timestamp) values (?, ?)")
            .run(name, new Date(0).toISOString());
        }),
    },
    async dispose() {
      for (const each of opened) await each.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
};
