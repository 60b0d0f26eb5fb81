import { randomUUID } from "node:crypto";
import pg from "pg";
import { openRunStore } from "../../src/store/open-run-store.js";
import type { RunStore } from "../../src/store/run-store.js";
import { type SegmentRow, segmentTampering } from "./segment-tampering.js";
import { newTestEnvironment, type RunStoreFactory, type StoreUnderTest } from "./store-harness.js";

/**
 * The PostgreSQL backend against a real server: `scripts/postgres-for-tests.sh` starts one on loopback and
 * prints CHARTER_TEST_DATABASE_URL (CI runs it before the tests). Each test gets its own schema, dropped after.
 */
export const postgresTestUrl = process.env.CHARTER_TEST_DATABASE_URL ?? "";
const url = postgresTestUrl;

async function withClient<T>(schema: string | null, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: url,
    ...(schema !== null ? { options: `-c search_path=${schema}` } : {}),
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export const postgresStoreFactory: RunStoreFactory = async (): Promise<StoreUnderTest> => {
  const schema = `charter_test_${randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const environment = newTestEnvironment();
  const location = { url, postgres: { schema } };
  const opened: RunStore[] = [];
  const open = async () => {
    const store = await openRunStore({ ...location, environment });
    opened.push(store);
    return store;
  };
  const store = await open();
  const query = (text: string, values: unknown[]) =>
    withClient(schema, async (client) => {
      await client.query(text, values);
    });
  return {
    store,
    environment,
    location,
    reopen: open,
    tamper: {
      ...segmentTampering({
        read: (runId) =>
          withClient(schema, async (client) => {
            const result =
              runId === null
                ? await client.query("select * from charter_run_segments")
                : await client.query(
                    "select * from charter_run_segments where run_id = $1 order by position",
                    [runId],
                  );
            return result.rows as SegmentRow[];
          }),
        write: (row) =>
          query(
            "update charter_run_segments set first_seq = $1, entry_count = $2, records = $3, entries = $4 where run_id = $5 and position = $6",
            [row.first_seq, row.entry_count, row.records, row.entries, row.run_id, row.position],
          ),
      }),
      // The column is one of three names the caller chose, never input.
      setRunColumn: (runId, column, value) =>
        query(`update charter_runs set ${column} = $1 where run_id = $2`, [value, runId]),
      recordMigration: (name) =>
        query("insert into charter_schema_migrations (name, timestamp) values ($1, $2)", [
          name,
          new Date(0).toISOString(),
        ]),
    },
    async dispose() {
      for (const each of opened) await each.close();
      await withClient(null, async (client) => {
        await client.query(`drop schema if exists ${schema} cascade`);
      });
    },
  };
};
