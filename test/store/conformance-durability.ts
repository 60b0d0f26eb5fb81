import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { runStoreSchemaVersion } from "../../src/store/migrations/run-store-migrations.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import { runExportFormat } from "../../src/store/run-export.js";
import { verifyStoredRun } from "../../src/store/verify-stored-run.js";
import { charterErrorOf } from "./conformance-chain.js";
import type { ConformanceContext } from "./run-store-conformance.js";
import { collectPages, createDraftedRun, draftRun } from "./store-harness.js";

const childScript = resolve(import.meta.dirname, "commit-until-killed.ts");
const resolveHook = resolve(import.meta.dirname, "typescript-resolution.mjs");

export function describeDurabilityConformance({ current, factory }: ConformanceContext): void {
  describe("durability and versions", () => {
    it("keeps every acknowledged COMMIT when the writing process is killed with SIGKILL", async () => {
      const { location, reopen } = current();
      const child = spawn(
        process.execPath,
        ["--import", resolveHook, childScript, JSON.stringify(location), "run-killed"],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
      });
      const exited = new Promise<NodeJS.Signals | null>((done) =>
        child.on("exit", (_code, signal) => done(signal)),
      );
      const acknowledged: { commits: number; entries: number; head: string }[] = [];
      for await (const line of createInterface({ input: child.stdout })) {
        const [commits, entries, head] = line.split(" ");
        acknowledged.push({ commits: Number(commits), entries: Number(entries), head: head ?? "" });
        // Killed while it keeps committing: the kill lands between, or in the middle of, later transactions.
        if (acknowledged.length === 5) child.kill("SIGKILL");
      }
      expect(await exited, stderr).toBe("SIGKILL");
      expect(acknowledged.length).toBeGreaterThanOrEqual(5);

      const store = await reopen();
      const lastAcknowledged = acknowledged[acknowledged.length - 1]!;
      const run = await store.getRun("run-killed");
      expect(run?.entryCount).toBeGreaterThanOrEqual(lastAcknowledged.entries);
      // Whole batches only: each commit stores one turn of five entries and the RECORD entry binding its checkpoint.
      expect((run?.entryCount ?? 0) % 6).toBe(0);
      const lines = await collectPages(store.readEntryLines("run-killed"));
      for (const ack of acknowledged) expect(lines[ack.entries - 1]?.hash).toBe(ack.head);
      expect(await verifyStoredRun(store, "run-killed")).toMatchObject({
        ok: true,
        entries: run?.entryCount,
      });
      expect((await store.latestCheckpoint("run-killed"))?.seq).toBe((run?.entryCount ?? 0) - 2);
    });

    it("reopens a database without migrating it again and refuses one migrated by a newer Charter", async () => {
      const { store, environment, reopen, tamper } = current();
      expect(store.schemaVersion).toBe(runStoreSchemaVersion);
      const draft = draftRun(environment, "run-reopened");
      await createDraftedRun(store, draft);
      await store.appendCommit(draft.batch(draft.appendTurn(1)));
      const again = await reopen();
      expect(again.schemaVersion).toBe(runStoreSchemaVersion);
      expect(await verifyStoredRun(again, "run-reopened")).toMatchObject({ ok: true, entries: 5 });

      await tamper.recordMigration("9999_from_the_future");
      const newer = await charterErrorOf(reopen());
      expect(newer.code).toBe("CONFIGURATION_INVALID");
      expect(newer.details.reason).toBe("schema_newer");
      expect(newer.details.unknownMigrations).toEqual(["9999_from_the_future"]);
    });

    it("exports a run and imports it into another database unchanged", async () => {
      const { environment } = current();
      const store = current().store.forTenant("acme");
      const draft = draftRun(environment, "run-moved");
      await createDraftedRun(store, draft);
      for (let turn = 1; turn <= 2; turn++) await store.appendCommit(draft.batch(draft.appendTurn(turn)));
      await store.recordToolOutput("run-moved", {
        handle: "out-1",
        toolName: "big",
        callId: "call-1",
        bytes: 9,
        lines: 2,
        path: "/tmp/o",
      });
      await store.finishRun({
        runId: "run-moved",
        status: "completed",
        outcome: "COMPLETED_WITH_TOOLS",
        finalReport: "done",
      });
      const exported = await store.exportRun("run-moved");
      expect(exported).toMatchObject({
        format: runExportFormat,
        v: 1,
        schema_version: runStoreSchemaVersion,
      });
      expect(exported.entries).toHaveLength(10);
      expect(exported.checkpoints.map((checkpoint) => checkpoint.seq)).toEqual([4, 9]);

      const existing = await charterErrorOf(store.importRun(exported));
      expect(existing.details.reason).toBe("run_exists");

      const otherDatabase = await factory();
      try {
        // A run is imported for its own tenant only: the default tenant's store refuses acme's run.
        const elsewhere = await charterErrorOf(
          otherDatabase.store.importRun(JSON.parse(JSON.stringify(exported))),
        );
        expect(elsewhere.details.reason).toBe("tenant_mismatch");
        expect(await otherDatabase.store.forTenant("acme").getRun("run-moved")).toBeNull();
        const other = { store: otherDatabase.store.forTenant("acme") };
        const imported = await other.store.importRun(JSON.parse(JSON.stringify(exported)));
        expect(imported).toEqual(await store.getRun("run-moved"));
        expect(await other.store.exportRun("run-moved")).toEqual(exported);
        expect(await verifyStoredRun(other.store, "run-moved")).toMatchObject({ ok: true, entries: 10 });

        const forged = {
          ...exported,
          run: { ...exported.run, run_id: "run-forged" },
          header: { ...exported.header, run_id: "run-forged" },
        };
        const payload = forged.raw_payloads[0]!;
        const badPayload = await charterErrorOf(
          other.store.importRun({
            ...forged,
            raw_payloads: [{ hash: payload.hash, json: `${payload.json} ` }],
          }),
        );
        expect(badPayload.details.reason).toBe("export_invalid");
        const newer = await charterErrorOf(other.store.importRun({ ...forged, v: 2 }));
        expect(newer.details.reason).toBe("schema_newer");
        const notAnExport = await charterErrorOf(other.store.importRun({ format: "something-else" }));
        expect(notAnExport.details.reason).toBe("export_invalid");
        expect(await other.store.getRun("run-forged")).toBeNull();
      } finally {
        await otherDatabase.dispose();
      }
    });

    it("continues a run stored in the schema 1 tables (an import) in segments, and reads both back in order", async () => {
      const { store, environment } = current();
      const draft = draftRun(environment, "run-mixed");
      await createDraftedRun(store, draft);
      for (let turn = 1; turn <= 2; turn++) await store.appendCommit(draft.batch(draft.appendTurn(turn)));
      await store.finishRun({ runId: "run-mixed", status: "interrupted", outcome: "INTERRUPTED" });
      const exported = await store.exportRun("run-mixed");

      const other = await factory();
      try {
        // importRun writes the schema 1 tables; the next batch goes into a segment.
        await other.store.importRun(exported);
        await other.store.reopenRun("run-mixed");
        // The resumed writer stores a payload the run already stored before (the same provider error, say).
        const third = draft.batch(draft.appendTurn(3));
        const repeated = exported.raw_payloads[0]!;
        await other.store.appendCommit({ ...third, rawPayloads: [...(third.rawPayloads ?? []), repeated] });
        expect(await verifyStoredRun(other.store, "run-mixed")).toMatchObject({ ok: true, entries: 15 });
        const seqs: number[] = [];
        for await (const entry of other.store.readEntries("run-mixed")) seqs.push(entry.seq);
        expect(seqs).toEqual([...Array(15).keys()]);
        const fromNine: number[] = [];
        for await (const entry of other.store.readEntries("run-mixed", { fromSeq: 9 }))
          fromNine.push(entry.seq);
        expect(fromNine).toEqual([9, 10, 11, 12, 13, 14]);
        expect((await other.store.readAccounting("run-mixed")).map((entry) => entry.turn)).toEqual([
          1, 1, 2, 2, 3, 3,
        ]);
        expect((await other.store.readToolResults("run-mixed")).map((result) => result.position)).toEqual([
          0, 1, 2,
        ]);
        expect((await other.store.latestCheckpoint("run-mixed"))?.seq).toBe(14);
        expect((await other.store.readCheckpoint("run-mixed", 4))?.turn).toBe(1);
        const again = await other.store.exportRun("run-mixed");
        expect(again.checkpoints.map((checkpoint) => checkpoint.seq)).toEqual([4, 9, 14]);
        expect(again.entries.slice(0, 10)).toEqual(exported.entries);
        const rawHashes = (await collectPages(other.store.readRunRawPayloads("run-mixed"))).map(
          (payload) => payload.hash,
        );
        expect(new Set(rawHashes).size).toBe(rawHashes.length);
        expect(rawHashes).toHaveLength(exported.raw_payloads.length + 2);
        // Exported once each, so the export imports into another store.
        expect(again.raw_payloads.filter((payload) => payload.hash === repeated.hash)).toHaveLength(1);
        const elsewhere = await factory();
        try {
          await elsewhere.store.importRun(again);
          expect(await verifyStoredRun(elsewhere.store, "run-mixed")).toMatchObject({
            ok: true,
            entries: 15,
          });
        } finally {
          await elsewhere.dispose();
        }
      } finally {
        await other.dispose();
      }
    });

    it("refuses every operation once closed", async () => {
      const { store } = current();
      await store.close();
      const closed = await charterErrorOf(store.getRun("run-any"));
      expect(closed.code).toBe("INTERNAL_ERROR");
      expect(closed.details.reason).toBe("store_unavailable");
      await store.close();
    });

    it("refuses a location that is neither PostgreSQL nor SQLite", async () => {
      const { environment } = current();
      const malformed = await charterErrorOf(openRunStore({ url: "mysql://localhost/charter", environment }));
      expect(malformed.code).toBe("CONFIGURATION_INVALID");
    });
  });
}
