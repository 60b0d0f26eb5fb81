import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { systemEnvironment } from "../../src/foundation/environment.js";
import { replayStoredRun } from "../../src/runner/replay-stored-run.js";
import { resumeStoredRun } from "../../src/runner/resume-stored-run.js";
import { runStoreSchemaVersion } from "../../src/store/migrations/run-store-migrations.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import { parseRunExport, runExportVersion } from "../../src/store/run-export.js";
import { verifyStoredRun } from "../../src/store/verify-stored-run.js";
import { charterErrorOf } from "./conformance-chain.js";
import { postgresStoreFactory, postgresTestUrl } from "./postgres-store-factory.js";
import { sqliteStoreFactory } from "./sqlite-store-factory.js";
import type { RunStoreFactory } from "./store-harness.js";
import { collect } from "./store-harness.js";

/**
 * The fixture corpus: runs stored by earlier Charters, in the export format of their version
 * (test/fixtures/store/v<version>/), written once by generate-store-fixtures.ts and only ever read here. Every
 * one of them must load into a fresh store of each backend, verify, and read back as it was written.
 */
const corpus = resolve(import.meta.dirname, "../fixtures/store");
const fixtures = readdirSync(corpus)
  .filter((name) => /^v\d+$/.test(name))
  .flatMap((version) =>
    readdirSync(join(corpus, version))
      .filter((name) => name.endsWith(".json"))
      .map((name) => ({
        name: `${version}/${name}`,
        text: readFileSync(join(corpus, version, name), "utf8"),
      })),
  );

const backends: [string, RunStoreFactory][] = [["sqlite", sqliteStoreFactory]];
// Without a server, postgres.test.ts reports why (and fails in CI); the corpus is then read on SQLite only.
if (postgresTestUrl !== "") backends.push(["postgres", postgresStoreFactory]);

describe("stored-run fixture corpus", () => {
  it("holds runs of every outcome kind, the current export version among them", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(3);
    const statuses = fixtures.map(
      (fixture) => (JSON.parse(fixture.text) as { run: { status: string } }).run.status,
    );
    expect(new Set(statuses)).toEqual(new Set(["completed", "failed", "awaiting_approval"]));
    expect(fixtures.some((fixture) => fixture.name.startsWith(`v${runExportVersion}/`))).toBe(true);
  });

  for (const [backend, factory] of backends) {
    for (const fixture of fixtures) {
      it(`${backend}: loads ${fixture.name}, verifies it and reads it back unchanged`, async () => {
        const opened = await factory();
        try {
          const original = JSON.parse(fixture.text) as unknown;
          const expected = parseRunExport(original);
          // Each run is stored, read and verified by its own tenant's store; any other tenant's finds nothing.
          const store = opened.store.forTenant(expected.run.tenant_id);
          const stranger = opened.store.forTenant("a-stranger");
          expect((await charterErrorOf(stranger.importRun(original))).details.reason).toBe("tenant_mismatch");
          const imported = await store.importRun(original);
          expect(await stranger.getRun(expected.run.run_id)).toBeNull();
          expect(imported.runId).toBe(expected.run.run_id);
          expect(imported).toMatchObject({
            status: expected.run.status,
            outcome: expected.run.outcome,
            tenantId: expected.run.tenant_id,
            parentRunId: expected.run.parent_run_id,
            entryCount: expected.entries.length,
            headHash: expected.run.head_hash,
          });
          const verification = await verifyStoredRun(store, expected.run.run_id);
          expect(verification).toEqual({
            ok: true,
            entries: expected.entries.length,
            head_hash: expected.run.head_hash,
            first_bad_entry: null,
          });
          // Exported again by this Charter: the same run, in the current format.
          expect(await store.exportRun(expected.run.run_id)).toEqual({
            ...expected,
            schema_version: runStoreSchemaVersion,
          });
          const latest = await store.latestCheckpoint(expected.run.run_id);
          expect(latest?.seq).toBe(expected.checkpoints[expected.checkpoints.length - 1]?.seq);
          expect(
            (await collect(store.readEntries(expected.run.run_id))).map((entry) => entry.state),
          ).toContain("COMMIT");
          // The file on disk is untouched by all of this.
          expect(readFileSync(join(corpus, fixture.name), "utf8")).toBe(fixture.text);
        } finally {
          await opened.dispose();
        }
      });
    }
  }

  for (const fixture of fixtures) {
    it(`replays ${fixture.name} offline to its recorded outcome and chain head`, async () => {
      const { store: opened, dispose } = await sqliteStoreFactory();
      try {
        const expected = parseRunExport(JSON.parse(fixture.text));
        const store = opened.forTenant(expected.run.tenant_id);
        await store.importRun(JSON.parse(fixture.text));
        const report = await replayStoredRun(store, expected.run.run_id);
        expect(report).toMatchObject({
          ok: true,
          divergence: null,
          outcome: expected.run.outcome,
          recordedOutcome: expected.run.outcome,
          headHash: expected.run.head_hash,
          entries: expected.entries.length,
        });
      } finally {
        await dispose();
      }
    });
  }

  it("refuses to resume a stored run that records no agent file, and leaves it waiting (RUN_NOT_RESUMABLE)", async () => {
    // The fixture was written through the library, not `charter run`: its checkpoints carry no invocation.
    const fixture = fixtures.find((candidate) => candidate.name.endsWith("awaiting-approval.json"));
    const directory = await mkdtemp(join(tmpdir(), "charter-fixture-resume-"));
    const path = join(directory, "charter.db");
    try {
      const store = await openRunStore({ path, environment: systemEnvironment });
      const run = await store.importRun(JSON.parse(fixture?.text ?? "{}"));
      await store.close();
      const error = await resumeStoredRun({
        runId: run.runId,
        store: path,
        approve: ["call_reserve"],
        homeDirectory: directory,
        cwd: directory,
      }).catch((caught: unknown) => caught);
      expect(CharterError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: "RUN_NOT_RESUMABLE", details: { reason: "no_invocation" } });
      const reopened = await openRunStore({ path, environment: systemEnvironment });
      try {
        expect(await reopened.getRun(run.runId)).toMatchObject({
          status: "awaiting_approval",
          statusReason: "approval_required",
        });
      } finally {
        await reopened.close();
      }
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("keeps a pending approval in the last checkpoint of the run that awaits it", async () => {
    const fixture = fixtures.find((candidate) => candidate.name.endsWith("awaiting-approval.json"));
    const { store, dispose } = await sqliteStoreFactory();
    try {
      const run = await store.importRun(JSON.parse(fixture?.text ?? "{}"));
      expect(run).toMatchObject({
        status: "awaiting_approval",
        statusReason: "approval_required",
        outcome: "INTERRUPTED",
      });
      const checkpoint = await store.latestCheckpoint(run.runId);
      expect(checkpoint?.document.pending_approval).toMatchObject({ id: "call_reserve", name: "reserve" });
    } finally {
      await dispose();
    }
  });
});
