import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";
import { createStoreTranscriptWriter } from "../../src/store/store-transcript-writer.js";
import { toolRequestHash } from "../../src/store/tool-request-hash.js";
import { verifyStoredRun } from "../../src/store/verify-stored-run.js";
import { createHashChainTranscript } from "../../src/transcript/hash-chain-transcript.js";
import { charterErrorOf } from "./conformance-chain.js";
import type { ConformanceContext } from "./run-store-conformance.js";
import {
  appendTurnEntries,
  checkpointDocument,
  collect,
  createDraftedRun,
  draftRun,
  startOfTime,
  storeTestContract,
  turnAccounting,
  turnToolResult,
} from "./store-harness.js";

export function describeRecordsConformance({ current }: ConformanceContext): void {
  describe("records around the chain", () => {
    it("serves the read-only tool cache until its entries expire, by the injected clock", async () => {
      const { store, environment } = current();
      const key = toolRequestHash({ server: "docs", tool: "search", arguments: { query: "wal", limit: 5 } });
      expect(toolRequestHash({ server: "docs", tool: "search", arguments: { limit: 5, query: "wal" } })).toBe(
        key,
      );
      expect(
        toolRequestHash({ server: "other", tool: "search", arguments: { query: "wal", limit: 5 } }),
      ).not.toBe(key);
      expect(await store.cacheGet(key)).toBeNull();

      const start = environment.now();
      await store.cachePut({
        key,
        server: "docs",
        tool: "search",
        value: { text: "first" },
        expiresAt: start + 1_000,
      });
      expect(await store.cacheGet(key)).toEqual({
        key,
        server: "docs",
        tool: "search",
        value: { text: "first" },
        createdAt: start,
        expiresAt: start + 1_000,
        tenantId: null,
        scope: null,
      });
      environment.advance(999);
      expect((await store.cacheGet(key))?.value).toEqual({ text: "first" });
      environment.advance(1);
      expect(await store.cacheGet(key)).toBeNull();
      expect(await store.cacheGet(key, start + 500)).not.toBeNull();

      await store.cachePut({
        key,
        server: "docs",
        tool: "search",
        value: { text: "second" },
        expiresAt: environment.now() + 60_000,
      });
      const other = toolRequestHash({ server: null, tool: "clock", arguments: {} });
      await store.cachePut({
        key: other,
        server: null,
        tool: "clock",
        value: "tick",
        expiresAt: environment.now() + 10,
      });
      expect((await store.cacheGet(key))?.value).toEqual({ text: "second" });
      environment.advance(10);
      expect(await store.cachePurgeExpired()).toBe(1);
      expect((await store.statistics()).cacheEntries).toBe(1);
      expect(await store.cacheGet(other, environment.now() - 20)).toBeNull();
    });

    it("removes one tenant's cache entries (or one scope's within it) and no other's", async () => {
      const { store, environment } = current();
      const acme = store.forTenant("acme");
      const globex = store.forTenant("globex");
      const expiresAt = environment.now() + 60_000;
      const put = (key: string, tenantId: string | null, scope: string | null = null) =>
        store
          .forTenant(tenantId)
          .cachePut({ key, server: "docs", tool: "search", value: key, expiresAt, tenantId, scope });
      await put("acme-1", "acme");
      await put("acme-2", "acme", "role:admin");
      await put("acme-3", "acme", "role:viewer");
      await put("globex-1", "globex");
      await put("none-1", null);
      expect((await acme.cacheGet("acme-2"))?.tenantId).toBe("acme");
      expect((await acme.cacheGet("acme-2"))?.scope).toBe("role:admin");

      expect(await store.cachePurgeTenant("acme", { scope: "role:admin" })).toBe(1);
      expect(await acme.cacheGet("acme-2")).toBeNull();
      expect(await acme.cacheGet("acme-3")).not.toBeNull();
      expect(await store.cachePurgeTenant("acme")).toBe(2);
      for (const key of ["acme-1", "acme-3"]) expect(await acme.cacheGet(key)).toBeNull();
      expect((await globex.cacheGet("globex-1"))?.value).toBe("globex-1");
      expect((await store.cacheGet("none-1"))?.value).toBe("none-1");
      expect(await store.cachePurgeTenant(null)).toBe(1);
      expect((await globex.cacheGet("globex-1"))?.value).toBe("globex-1");
    });

    it("removes one tenant's cache entries of one tool source, every scope's, and no other source's or tenant's", async () => {
      const { store, environment } = current();
      const expiresAt = environment.now() + 60_000;
      const put = (key: string, tenantId: string, server: string | null, scope: string | null) =>
        store
          .forTenant(tenantId)
          .cachePut({ key, server, tool: "search", value: key, expiresAt, tenantId, scope });
      await put("acme-docs-admin", "acme", "docs", "role:admin");
      await put("acme-docs-viewer", "acme", "docs", "role:viewer");
      await put("acme-rest", "acme", "rest", "role:viewer");
      await put("acme-function", "acme", null, "role:viewer");
      await put("globex-docs", "globex", "docs", "role:viewer");
      expect(await store.cachePurgeTenant("acme", { server: "docs" })).toBe(2);
      const acme = store.forTenant("acme");
      for (const key of ["acme-docs-admin", "acme-docs-viewer"]) expect(await acme.cacheGet(key)).toBeNull();
      expect((await acme.cacheGet("acme-rest"))?.value).toBe("acme-rest");
      expect((await acme.cacheGet("acme-function"))?.value).toBe("acme-function");
      expect((await store.forTenant("globex").cacheGet("globex-docs"))?.value).toBe("globex-docs");
      expect(await store.cachePurgeTenant("acme", { server: null })).toBe(1);
      expect(await acme.cacheGet("acme-function")).toBeNull();
      expect((await acme.cacheGet("acme-rest"))?.value).toBe("acme-rest");
    });

    it("records who runs a run and its heartbeat, only while that owner runs it", async () => {
      const { store, environment } = current();
      const draft = draftRun(environment, "run-owned");
      const owner = { pid: 4242, host: "host-a", startedAt: startOfTime - 60_000 };
      const created = await store.createRun({
        header: draft.memory.header!,
        contract: draft.contract,
        agentId: "store-test-agent",
        owner,
      });
      expect(created).toMatchObject({ owner, heartbeatAt: environment.now() });
      environment.advance(30_000);
      expect(await store.heartbeatRun("run-owned", owner)).toBe(true);
      expect(await store.getRun("run-owned")).toMatchObject({ owner, heartbeatAt: environment.now() });
      // Another process with the same id (started at another time) is not the owner.
      expect(await store.heartbeatRun("run-owned", { ...owner, startedAt: owner.startedAt + 5_000 })).toBe(
        false,
      );

      await store.appendCommit(draft.batch(draft.appendTurn(1)));
      draft.transcript.append({
        state: "TERMINATE",
        step_id: "turn-1/terminate",
        turn: 1,
        timestamp: environment.now(),
        action: null,
        result: { outcome: "INTERRUPTED" },
        model_fingerprint: null,
      });
      await store.finishRun({
        runId: "run-owned",
        ...draft.take(),
        status: "interrupted",
        outcome: "INTERRUPTED",
      });
      // A stopped run has no heartbeat; a reopening process becomes its owner.
      expect(await store.heartbeatRun("run-owned", owner)).toBe(false);
      const next = { pid: 5151, host: "host-b", startedAt: startOfTime };
      environment.advance(1_000);
      expect(await store.reopenRun("run-owned", { owner: next })).toMatchObject({
        status: "running",
        owner: next,
        heartbeatAt: environment.now(),
      });
      expect(await store.heartbeatRun("run-owned", owner)).toBe(false);
      expect(await store.heartbeatRun("run-owned", next)).toBe(true);
      // Runs created without an owner (by a library writer, or before owners were recorded) have none.
      const plain = draftRun(environment, "run-unowned");
      expect(await createDraftedRun(store, plain)).toMatchObject({ owner: null, heartbeatAt: null });
    });

    it("lists runs newest first, filtered by tenant, status and agent, a page at a time", async () => {
      const { store, environment } = current();
      const tenants = ["acme", "globex", "acme", null, "acme"];
      for (const [index, tenant] of tenants.entries()) {
        environment.advance(1_000);
        const draft = draftRun(environment, `run-list-${index}`);
        await createDraftedRun(store, draft, {
          ...(tenant !== null ? { tenantId: tenant } : {}),
          agentId: index % 2 === 0 ? "even-agent" : "odd-agent",
        });
      }
      await store.forTenant("acme").finishRun({
        runId: "run-list-2",
        status: "failed",
        outcome: "FAILED_TIMEOUT",
        errorCode: "TIMEOUT",
      });
      // Each store lists its own tenant's runs: the default tenant's (stored without one), or a view's.
      const ids = async (query: Parameters<typeof store.listRuns>[0], tenant: string | null = "acme") =>
        (await store.forTenant(tenant).listRuns(query)).map((run) => run.runId);
      expect(await ids({})).toEqual(["run-list-4", "run-list-2", "run-list-0"]);
      expect(await ids({}, "globex")).toEqual(["run-list-1"]);
      expect(await ids({}, null)).toEqual(["run-list-3"]);
      expect((await store.listRuns()).map((run) => run.runId)).toEqual(["run-list-3"]);
      expect(await ids({ tenantId: "acme" })).toEqual(["run-list-4", "run-list-2", "run-list-0"]);
      expect(await ids({ status: "running" })).toEqual(["run-list-4", "run-list-0"]);
      expect(await ids({ status: "failed" })).toEqual(["run-list-2"]);
      expect(await ids({ agentId: "even-agent" })).toEqual(["run-list-4", "run-list-2", "run-list-0"]);
      expect(await ids({ agentId: "odd-agent" }, "globex")).toEqual(["run-list-1"]);
      // A filter naming another tenant than the store's selects nothing.
      expect(await ids({ tenantId: "globex" })).toEqual([]);
      expect(await ids({ tenantId: "initech" }, "initech")).toEqual([]);
      expect(await ids({ limit: 2 })).toEqual(["run-list-4", "run-list-2"]);
      expect(await ids({ limit: 2, offset: 1 })).toEqual(["run-list-2", "run-list-0"]);
      const failed = (await store.forTenant("acme").listRuns({ status: "failed" }))[0];
      expect(failed).toMatchObject({ outcome: "FAILED_TIMEOUT", errorCode: "TIMEOUT", tenantId: "acme" });
    });

    it("keeps tool results for replay, by request hash, and stored outputs' metadata", async () => {
      const { store, environment } = current();
      const draft = draftRun(environment, "run-tools");
      await createDraftedRun(store, draft);
      await store.appendCommit(draft.batch(draft.appendTurn(1)));
      // The same request twice in turn 2: replay gets both, in order.
      await store.appendCommit(
        draft.batch(draft.appendTurn(2), {
          toolResults: [
            turnToolResult(1),
            { ...turnToolResult(2), result: { content: "second" } },
            turnToolResult(1),
          ],
          toolOutputs: [
            {
              handle: "out-1",
              toolName: "big",
              callId: "call-2",
              bytes: 70_000,
              lines: 900,
              path: "/tmp/charter-x/out-1.txt",
            },
          ],
        }),
      );
      const all = await store.readToolResults("run-tools");
      expect(all.map((result) => `${result.position}:${result.turn}:${result.callId}`)).toEqual([
        "0:1:call-1",
        "1:1:call-1",
        "2:2:call-2",
        "3:1:call-1",
      ]);
      expect(all[0]).toEqual({
        ...turnToolResult(1),
        runId: "run-tools",
        position: 0,
        createdAt: all[0]!.createdAt,
      });
      const same = await store.readToolResults("run-tools", { requestHash: turnToolResult(1).requestHash });
      expect(same.map((result) => result.position)).toEqual([0, 1, 3]);

      await store.recordToolOutput("run-tools", {
        handle: "out-2",
        toolName: "big",
        callId: "call-9",
        bytes: 5_000_000_000,
        lines: 12,
        path: "/tmp/charter-x/out-2.txt",
      });
      const outputs = await store.listToolOutputs("run-tools");
      expect(outputs.map((output) => [output.handle, output.bytes])).toEqual([
        ["out-1", 70_000],
        ["out-2", 5_000_000_000],
      ]);
      const duplicate = await charterErrorOf(
        store.recordToolOutput("run-tools", {
          handle: "out-2",
          toolName: "big",
          callId: "c",
          bytes: 1,
          lines: 1,
          path: "/p",
        }),
      );
      expect(duplicate.details.reason).toBe("duplicate_record");
      const unknown = await charterErrorOf(
        store.recordToolOutput("run-nobody", {
          handle: "out-1",
          toolName: "big",
          callId: "c",
          bytes: 1,
          lines: 1,
          path: "/p",
        }),
      );
      expect(unknown.code).toBe("RUN_NOT_FOUND");
    });

    it("runs a real transcript through the store-backed writer: commits with checkpoints, finish, verify", async () => {
      const { environment } = current();
      const store = current().store.forTenant("acme");
      const contract = storeTestContract();
      const writer = createStoreTranscriptWriter({
        store,
        agentId: "writer-agent",
        tenantId: "acme",
        correlationId: "req-1",
      });
      const transcript = createHashChainTranscript({
        runId: "run-writer",
        contractHash: contract.contract_hash,
        adapterVersion: contract.adapter_version,
        modelProfileId: contract.model_profile_id,
        redactor: new SecretRedactor(),
        writer,
        environment,
        keepEntries: true,
      });
      transcript.writeContract(contract);
      for (let turn = 1; turn <= 3; turn++) {
        appendTurnEntries(transcript, environment, turn);
        const receipt = await writer.commit({
          checkpoint: checkpointDocument(turn, transcript.entryCount - 1),
          accounting: turnAccounting("run-writer", turn, environment.now()),
          toolResults: [turnToolResult(turn)],
          totals: {
            turns: turn,
            tokensIn: 100 * turn,
            tokensOut: 20 * turn,
            costUsd: 0,
            toolsUsed: ["lookup"],
          },
        });
        // Each turn's five entries, then the RECORD entry binding its checkpoint and tool result.
        expect(receipt).toEqual({
          entryCount: 6 * turn,
          headHash: transcript.headHash,
          checkpointSeq: 6 * turn - 2,
        });
        expect(transcript.entries.at(-1)?.state).toBe("RECORD");
        expect((await store.latestCheckpoint("run-writer"))?.seq).toBe(6 * turn - 2);
      }
      // A commit needs a COMMIT entry since the previous batch.
      const early = await charterErrorOf(writer.commit({ checkpoint: { v: 1 } }));
      expect(early.details.reason).toBe("batch_invalid");

      transcript.append({
        state: "TERMINATE",
        step_id: "turn-3/terminate",
        turn: 3,
        timestamp: environment.now(),
        action: null,
        result: { outcome: "COMPLETED_WITH_TOOLS" },
        model_fingerprint: null,
      });
      await writer.finish({
        status: "completed",
        outcome: "COMPLETED_WITH_TOOLS",
        finalReport: { status: "success" },
      });
      await transcript.close();
      expect(writer.runId).toBe("run-writer");

      const run = await store.getRun("run-writer");
      expect(run).toMatchObject({
        status: "completed",
        agentId: "writer-agent",
        tenantId: "acme",
        correlationId: "req-1",
        entryCount: 19,
        headHash: transcript.headHash,
      });
      expect(await collect(store.readEntries("run-writer"))).toEqual(transcript.entries);
      expect(await verifyStoredRun(store, "run-writer")).toEqual({
        ok: true,
        entries: 19,
        head_hash: transcript.headHash,
        first_bad_entry: null,
      });
      expect((await store.readAccounting("run-writer")).length).toBe(6);
    });

    it("flushes buffered entries without a checkpoint, and resumes a stored run's chain", async () => {
      const { store, environment } = current();
      const contract = storeTestContract();
      const options = {
        runId: "run-resumable",
        contractHash: contract.contract_hash,
        adapterVersion: contract.adapter_version,
        modelProfileId: contract.model_profile_id,
        redactor: new SecretRedactor(),
        environment,
      };
      const writer = createStoreTranscriptWriter({ store, agentId: "writer-agent" });
      const transcript = createHashChainTranscript({ ...options, writer });
      transcript.writeContract(contract);
      appendTurnEntries(transcript, environment, 1);
      await writer.commit({ checkpoint: checkpointDocument(1, 4) });
      await writer.flush();
      // The turn's five entries and the RECORD entry binding its checkpoint.
      expect((await store.getRun("run-resumable"))?.entryCount).toBe(6);

      // Another writer over the stored run: the header and contract are checked against the stored ones.
      const resumed = createStoreTranscriptWriter({ store, agentId: "writer-agent", mode: "resume" });
      const header = (await store.getRun("run-resumable"))!.header;
      resumed.writeHeader(header);
      resumed.writeContract(contract);
      await resumed.flush();

      const stranger = createStoreTranscriptWriter({ store, agentId: "writer-agent", mode: "resume" });
      stranger.writeHeader({ ...header, run_id: "run-unknown" });
      const missing = await charterErrorOf(stranger.flush());
      expect(missing.code).toBe("RUN_NOT_FOUND");
      expect(() => stranger.writeRaw("a".repeat(64), "{}")).toThrow();
    });

    it("finds a tampered entry, a truncated transcript and a corrupt raw payload", async () => {
      const { store, environment, tamper } = current();
      const draft = draftRun(environment, "run-tampered");
      await createDraftedRun(store, draft);
      for (let turn = 1; turn <= 3; turn++) await store.appendCommit(draft.batch(draft.appendTurn(turn)));
      expect((await verifyStoredRun(store, "run-tampered")).ok).toBe(true);

      const original = draft.memory.lines[7]!.slice(0, -1);
      await tamper.replaceEntryLine("run-tampered", 7, original.replace('"value 2"', '"value 9"'));
      const tampered = await verifyStoredRun(store, "run-tampered");
      expect(tampered).toMatchObject({ ok: false, entries: 7 });
      expect(tampered.first_bad_entry).toMatchObject({
        seq: 7,
        step_id: "turn-2/execute",
        reason_code: "RESULT_HASH_MISMATCH",
      });
      await tamper.replaceEntryLine("run-tampered", 7, original);

      // Lines intact and in order, but the seq column no longer numbers them (reads from a seq would go wrong).
      await tamper.shiftEntrySeqs("run-tampered", 10, 1000);
      const renumbered = await verifyStoredRun(store, "run-tampered");
      expect(renumbered).toMatchObject({ ok: false, entries: 10 });
      expect(renumbered.first_bad_entry).toMatchObject({ seq: 10, reason_code: "SEQUENCE_GAP" });
      await tamper.shiftEntrySeqs("run-tampered", 1010, -1000);
      expect((await verifyStoredRun(store, "run-tampered")).ok).toBe(true);

      // A segment's entry count sizes queries only: reads from a seq and verification go by the lines themselves.
      await tamper.miscountSegment("run-tampered", 5, 2);
      const fromEight: number[] = [];
      for await (const entry of store.readEntries("run-tampered", { fromSeq: 8 })) fromEight.push(entry.seq);
      expect(fromEight).toEqual([8, 9, 10, 11, 12, 13, 14]);
      expect((await verifyStoredRun(store, "run-tampered")).ok).toBe(true);
      await tamper.miscountSegment("run-tampered", 5, 5);

      await tamper.deleteEntry("run-tampered", 14);
      const truncated = await verifyStoredRun(store, "run-tampered");
      expect(truncated).toMatchObject({ ok: false, entries: 14 });
      expect(truncated.first_bad_entry?.reason_code).toBe("SEQUENCE_GAP");

      const rawHash = draft.memory.entries[0]!.action as { raw_request_hash: string };
      await tamper.replaceRawPayload(rawHash.raw_request_hash, '{"forged":true}');
      const corrupt = await verifyStoredRun(store, "run-tampered");
      expect(corrupt.first_bad_entry).toMatchObject({ seq: 0, reason_code: "RAW_PAYLOAD_HASH_MISMATCH" });
      expect((await charterErrorOf(verifyStoredRun(store, "run-nobody"))).code).toBe("RUN_NOT_FOUND");
    });
  });
}
