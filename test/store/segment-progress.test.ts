import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { segmentProgressColumns } from "../../src/store/migrations/migration-0003-segment-progress.js";
import { runStoreSchemaVersion } from "../../src/store/migrations/run-store-migrations.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import type { RunStore } from "../../src/store/run-store.js";
import { verifyStoredRun } from "../../src/store/verify-stored-run.js";
import { createDraftedRun, draftRun, newTestEnvironment } from "./store-harness.js";

/**
 * Schema 3 keeps a running run's progress in its segments, and schema 2 in its run row, updated with every
 * batch. A run that a schema-2 Charter left running (its process died, say) is continued by this one: the
 * database is migrated, and the run reads and continues from its row, then from the segments written since.
 */
let directory = "";
let path = "";
const opened: RunStore[] = [];
const environment = newTestEnvironment();
const open = async () => {
  const store = await openRunStore({ path, environment });
  opened.push(store);
  return store;
};

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "charter-progress-"));
  path = join(directory, "charter.db");
});

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  await rm(directory, { recursive: true, force: true });
});

/**
 * Turns the database into what a schema-2 Charter would have left after the same batches: the run row up to
 * date, the segments without progress columns, and migration 0003 not applied.
 */
function asSchema2(file: string, runId: string): void {
  const database = new Database(file);
  try {
    const newest = database
      .prepare(
        "select position, run_entry_count, head_hash, accounting_count, tool_result_count, turns, tokens_in, tokens_out, cost_usd, tools_used_json from charter_run_segments where run_id = ? order by position desc limit 1",
      )
      .get(runId) as Record<string, unknown>;
    database
      .prepare(
        "update charter_runs set entry_count = ?, head_hash = ?, accounting_count = ?, tool_result_count = ?, segment_count = ?, turns = ?, tokens_in = ?, tokens_out = ?, cost_usd = ?, tools_used_json = ? where run_id = ?",
      )
      .run(
        newest.run_entry_count,
        newest.head_hash,
        newest.accounting_count,
        newest.tool_result_count,
        (newest.position as number) + 1,
        newest.turns,
        newest.tokens_in,
        newest.tokens_out,
        newest.cost_usd,
        newest.tools_used_json,
        runId,
      );
    // Schema 10 first (the server's budget usage), then 9 (the server's rate-limit counters), then 8 (the server's identity tables), then 7, 6, 5 and 4.
    database.exec("drop table charter_budget_usage");
    database.prepare("delete from charter_schema_migrations where name = ?").run("0010_budget_usage");
    database.exec("drop index charter_rate_windows_start");
    database.exec("drop table charter_rate_windows");
    database.prepare("delete from charter_schema_migrations where name = ?").run("0009_rate_windows");
    database.exec("drop table charter_tenant_configurations");
    database.exec("drop index charter_security_events_tenant");
    database.exec("drop index charter_security_events_address");
    database.exec("drop table charter_security_events");
    database.exec("drop table charter_idempotency_keys");
    database.exec("drop index charter_api_keys_tenant");
    database.exec("drop table charter_api_keys");
    database.prepare("delete from charter_schema_migrations where name = ?").run("0008_server_identity");
    // Schema 7 first (the server's run requests and events), then 6 (the work receipts table), then 5 and 4 (each
    // added columns that schema 2 lacks, and is recorded after 0003).
    database.exec("drop table charter_run_events");
    database.exec("drop index charter_run_requests_state");
    database.exec("drop index charter_run_requests_conversation");
    database.exec("drop table charter_run_requests");
    database
      .prepare("delete from charter_schema_migrations where name = ?")
      .run("0007_run_requests_and_events");
    database.exec("drop index charter_work_receipts_tenant_repository");
    database.exec("drop table charter_work_receipts");
    database.prepare("delete from charter_schema_migrations where name = ?").run("0006_work_receipts");
    database.exec("alter table charter_runs drop column kind");
    database.prepare("delete from charter_schema_migrations where name = ?").run("0005_run_kind");
    database.exec("drop index charter_tool_cache_tenant");
    for (const column of ["tenant_id", "scope"])
      database.exec(`alter table charter_tool_cache drop column ${column}`);
    for (const column of ["owner_pid", "owner_host", "owner_started_at", "heartbeat_at"])
      database.exec(`alter table charter_runs drop column ${column}`);
    database
      .prepare("delete from charter_schema_migrations where name = ?")
      .run("0004_tenant_cache_and_run_owner");
    for (const [column] of segmentProgressColumns)
      database.exec(`alter table charter_run_segments drop column ${column}`);
    database.prepare("delete from charter_schema_migrations where name = ?").run("0003_segment_progress");
  } finally {
    database.close();
  }
}

describe("a run left running by a schema-2 Charter", () => {
  it("reads back where its row says, then continues, verifies and stops with everything counted", async () => {
    const first = await open();
    const draft = draftRun(environment, "run-from-schema-2");
    await createDraftedRun(first, draft);
    for (let turn = 1; turn <= 2; turn++) await first.appendCommit(draft.batch(draft.appendTurn(turn)));
    await first.close();
    asSchema2(path, "run-from-schema-2");
    // Its segments carry no progress: had the row not been brought up to date, it would still say 0 entries.
    const file = new Database(path, { readonly: true });
    expect(file.prepare("select count(*) from charter_run_segments").pluck().get()).toBe(2);
    expect(
      file
        .prepare("select count(*) from pragma_table_info('charter_run_segments') where name = 'head_hash'")
        .pluck()
        .get(),
    ).toBe(0);
    file.close();

    const store = await open();
    expect(store.schemaVersion).toBe(runStoreSchemaVersion);
    expect(await store.getRun("run-from-schema-2")).toMatchObject({
      status: "running",
      entryCount: 10,
      headHash: draft.transcript.headHash,
      accountingCount: 4,
      toolResultCount: 2,
      totals: { turns: 2 },
    });

    environment.advance(1_000);
    expect(await store.appendCommit(draft.batch(draft.appendTurn(3)))).toEqual({
      entryCount: 15,
      headHash: draft.transcript.headHash,
    });
    // A store that has not written the run reads it through its newest segment.
    const reader = await open();
    expect(await reader.getRun("run-from-schema-2")).toMatchObject({
      entryCount: 15,
      accountingCount: 6,
      toolResultCount: 3,
      updatedAt: environment.now(),
      totals: { turns: 3 },
    });
    expect((await reader.readAccounting("run-from-schema-2")).map((entry) => entry.turn)).toEqual([
      1, 1, 2, 2, 3, 3,
    ]);
    expect(await verifyStoredRun(reader, "run-from-schema-2")).toMatchObject({ ok: true, entries: 15 });

    await reader.finishRun({
      runId: "run-from-schema-2",
      status: "completed",
      outcome: "COMPLETED_WITH_TOOLS",
    });
    const row = new Database(path, { readonly: true });
    // Stopped, the run row itself holds its whole progress again.
    expect(
      row
        .prepare(
          "select status, entry_count, head_hash, accounting_count, tool_result_count, segment_count, turns from charter_runs",
        )
        .get(),
    ).toEqual({
      status: "completed",
      entry_count: 15,
      head_hash: draft.transcript.headHash,
      accounting_count: 6,
      tool_result_count: 3,
      // The stop stored a segment of its own, empty here: a stop takes a position, fencing older writers.
      segment_count: 4,
      turns: 3,
    });
    row.close();
  });
});

describe("a run stopped without a segment, as a Charter older than the stop's own segment did", () => {
  it("is not stopped again by a store holding its progress: the last batch is refused and nothing of it stored", async () => {
    const store = await open();
    const draft = draftRun(environment, "run-stopped-bare");
    await createDraftedRun(store, draft);
    await store.appendCommit(draft.batch(draft.appendTurn(1)));
    // Another (older) process stops the run by its row alone: this store's view of it does not move.
    const other = new Database(path);
    other.prepare("update charter_runs set status = 'interrupted' where run_id = ?").run("run-stopped-bare");
    draft.appendTurn(2);
    const { entries, rawPayloads } = draft.take();
    const refused = await store
      .finishRun({
        runId: "run-stopped-bare",
        entries,
        rawPayloads,
        status: "completed",
        outcome: "COMPLETED",
      })
      .then(
        () => null,
        (error: unknown) => error as { code?: string; details?: { reason?: string } },
      );
    expect(refused).toMatchObject({ code: "ARGUMENT_INVALID", details: { reason: "run_not_running" } });
    expect(other.prepare("select count(*) from charter_run_segments").pluck().get()).toBe(1);
    expect((await store.getRun("run-stopped-bare"))?.status).toBe("interrupted");
    other.close();
  });
});
