import { readFileSync } from "node:fs";
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemEnvironment } from "../../src/foundation/environment.js";
import { loadSessionCheckpoint } from "../../src/runner/load-session-checkpoint.js";
import { replayStoredRun } from "../../src/runner/replay-stored-run.js";
import { runStoreSchemaVersion } from "../../src/store/migrations/run-store-migrations.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import { parseRunExport } from "../../src/store/run-export.js";
import type { RunStore } from "../../src/store/run-store.js";
import { verifyStoredRun } from "../../src/store/verify-stored-run.js";

/**
 * A database written by Charter before run segments (run store schema 1, git abe7887; see
 * make-schema-1-database.mjs), opened by this Charter: it is migrated to the current schema on open and every run
 * in it reads back, verifies and replays as that version stored it. The file is copied first and never changed.
 */
const fixtures = resolve(import.meta.dirname, "../fixtures/store");
const fixtureDatabase = join(fixtures, "schema-1", "charter.sqlite");
const exported = (name: string) =>
  parseRunExport(JSON.parse(readFileSync(join(fixtures, "v1", `${name}.json`), "utf8")));

let directory = "";
let store: RunStore;
const original = readFileSync(fixtureDatabase);

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "charter-schema-1-"));
  await copyFile(fixtureDatabase, join(directory, "charter.db"));
  store = await openRunStore({ path: join(directory, "charter.db"), environment: systemEnvironment });
});

afterEach(async () => {
  await store.close();
  await rm(directory, { recursive: true, force: true });
});

describe("a run store written by Charter before run segments (schema 1)", () => {
  it("is migrated on open, and lists the runs it held", async () => {
    // The file itself is at schema 1: its only applied migration is the first.
    await copyFile(fixtureDatabase, join(directory, "pristine.db"));
    const file = new Database(join(directory, "pristine.db"), { readonly: true });
    try {
      expect(file.prepare("select name from charter_schema_migrations").pluck().all()).toEqual([
        "0001_initial_schema",
      ]);
    } finally {
      file.close();
    }
    expect(store.schemaVersion).toBe(runStoreSchemaVersion);
    expect(runStoreSchemaVersion).toBeGreaterThan(1);
    // Each tenant's store lists that tenant's runs: the default tenant's, acme's, globex's.
    const listed = async (tenant: string | null) =>
      (await store.forTenant(tenant).listRuns()).map((run) => [run.runId, run.status]).sort();
    expect([...(await listed(null)), ...(await listed("acme")), ...(await listed("globex"))].sort()).toEqual([
      ["run_fixture_approval", "awaiting_approval"],
      ["run_fixture_completed", "completed"],
      ["run_fixture_failed", "failed"],
      ["run_schema_1_writer", "completed"],
    ]);
    expect(readFileSync(fixtureDatabase).equals(original)).toBe(true);
  });

  const stores = { forTenant: (tenant: string | null) => store.forTenant(tenant) };
  for (const name of ["completed-with-tools", "failed-budget-exhausted", "awaiting-approval"]) {
    it(`reads ${name} back as that version stored it, and it verifies and replays`, async () => {
      const expected = exported(name);
      const runId = expected.run.run_id;
      const store = stores.forTenant(expected.run.tenant_id);
      expect(await store.exportRun(runId)).toEqual({ ...expected, schema_version: runStoreSchemaVersion });
      expect(await verifyStoredRun(store, runId)).toMatchObject({
        ok: true,
        entries: expected.entries.length,
      });
      expect(await replayStoredRun(store, runId)).toMatchObject({
        ok: true,
        outcome: expected.run.outcome,
        headHash: expected.run.head_hash,
      });
    });
  }

  it("reads back a run that version's own write path stored: entries, checkpoints, results, accounting", async () => {
    const runId = "run_schema_1_writer";
    const run = await store.getRun(runId);
    expect(run).toMatchObject({ status: "completed", outcome: "COMPLETED_WITH_TOOLS", entryCount: 22 });
    expect(await verifyStoredRun(store, runId)).toMatchObject({
      ok: true,
      entries: 22,
      head_hash: run?.headHash,
    });
    expect(await replayStoredRun(store, runId)).toMatchObject({ ok: true, headHash: run?.headHash });
    const checkpoint = await loadSessionCheckpoint(store, runId);
    expect(checkpoint?.turn).toBe(4);
    expect(checkpoint?.state.conversation.filter((message) => message.role === "tool")).toHaveLength(3);
    expect((await store.readToolResults(runId)).map((result) => result.callId)).toEqual([
      "call_1",
      "call_2",
      "call_3",
    ]);
    expect((await store.readAccounting(runId)).length).toBe(run?.accountingCount);
  });
});
