import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { verifyStoredRun } from "../../src/store/verify-stored-run.js";
import type { ConformanceContext } from "./run-store-conformance.js";
import { checkpointDocument, collect, collectPages, createDraftedRun, draftRun } from "./store-harness.js";

/** Rejects with a CharterError; resolves to it so the test can check its code and reason. */
export async function charterErrorOf(promise: Promise<unknown>): Promise<CharterError> {
  try {
    await promise;
  } catch (error) {
    if (CharterError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected the operation to fail");
}

export function describeChainConformance({ current }: ConformanceContext): void {
  describe("runs and their chains", () => {
    it("creates a run, gets it back whole and lists it", async () => {
      const { environment } = current();
      const store = current().store.forTenant("tenant-1");
      const draft = draftRun(environment, "run-create");
      const created = await store.createRun({
        header: draft.memory.header!,
        contract: draft.contract,
        agentId: "agent-a",
        tenantId: "tenant-1",
        correlationId: "corr-9",
        parentRunId: "run-parent",
      });
      expect(created).toMatchObject({ runId: "run-create", status: "running", entryCount: 0 });
      const run = await store.getRun("run-create");
      expect(run).toEqual(created);
      expect(run).toMatchObject({
        v: 1,
        contractId: draft.contract.contract_id,
        contractHash: draft.contract.contract_hash,
        agentId: "agent-a",
        tenantId: "tenant-1",
        correlationId: "corr-9",
        parentRunId: "run-parent",
        outcome: null,
        errorCode: null,
        finishedAt: null,
        createdAt: environment.now(),
        headHash: draft.memory.header!.genesis_hash,
        totals: { turns: 0, tokensIn: 0, tokensOut: 0, costUsd: 0, toolsUsed: [] },
      });
      expect(run?.contract).toEqual(JSON.parse(JSON.stringify(draft.contract)));
      // What createRun returns is the stored document too (plain JSON), not the caller's object.
      expect(created.contract).toStrictEqual(JSON.parse(JSON.stringify(draft.contract)));
      expect(created.contract).not.toBe(draft.contract);
      expect(created.header).toStrictEqual(draft.memory.header);
      expect(created.header).not.toBe(draft.memory.header);
      expect(run?.header).toEqual(draft.memory.header);
      expect(await store.getRun("run-missing")).toBeNull();
      const listed = await store.listRuns();
      expect(listed.map((summary) => summary.runId)).toEqual(["run-create"]);
      expect(listed[0]).not.toHaveProperty("contract");

      const duplicate = await charterErrorOf(createDraftedRun(store, draft));
      expect(duplicate.code).toBe("ARGUMENT_INVALID");
      expect(duplicate.details.reason).toBe("run_exists");
    });

    it("appends commits in order; the stored chain verifies and reads back line for line", async () => {
      const { store, environment } = current();
      const draft = draftRun(environment, "run-order");
      await createDraftedRun(store, draft);
      let receipt = { entryCount: 0, headHash: "" };
      for (let turn = 1; turn <= 4; turn++) {
        const commitSeq = draft.appendTurn(turn);
        receipt = await store.appendCommit(draft.batch(commitSeq));
      }
      expect(receipt).toEqual({ entryCount: 20, headHash: draft.transcript.headHash });

      const lines = await collectPages(store.readEntryLines("run-order"));
      expect(lines.map((stored) => stored.seq)).toEqual(Array.from({ length: 20 }, (_, index) => index));
      expect(lines.map((stored) => `${stored.line}\n`)).toEqual(draft.memory.lines);
      expect(await collect(store.readEntries("run-order"))).toEqual(draft.memory.entries);
      expect(
        (await collect(store.readEntries("run-order", { fromSeq: 17 }))).map((entry) => entry.seq),
      ).toEqual([17, 18, 19]);
      const accounting = await store.readAccounting("run-order");
      expect(accounting.map((entry) => `${entry.type}:${entry.turn}`)).toEqual([
        "llm:1",
        "tool:1",
        "llm:2",
        "tool:2",
        "llm:3",
        "tool:3",
        "llm:4",
        "tool:4",
      ]);
      const run = await store.getRun("run-order");
      expect(run).toMatchObject({
        entryCount: 20,
        headHash: draft.transcript.headHash,
        accountingCount: 8,
        toolResultCount: 4,
        totals: { turns: 4, tokensIn: 400, tokensOut: 80, costUsd: 0.004, toolsUsed: ["lookup"] },
      });
      expect(await verifyStoredRun(store, "run-order")).toEqual({
        ok: true,
        entries: 20,
        head_hash: draft.transcript.headHash,
        first_bad_entry: null,
      });
    });

    it("a failing commit leaves nothing half-written", async () => {
      const { store, environment } = current();
      const draft = draftRun(environment, "run-atomic");
      await createDraftedRun(store, draft);
      const firstSeq = draft.appendTurn(1);
      const firstBatch = draft.batch(firstSeq);
      await store.appendCommit(firstBatch);
      const before = await store.statistics();

      // Sending the same batch again: its seqs are already stored (a duplicate seq).
      const replayed = await charterErrorOf(store.appendCommit(firstBatch));
      expect(replayed.code).toBe("ARGUMENT_INVALID");
      expect(replayed.details.reason).toBe("chain_mismatch");

      // A batch that fails late, in its last insert (two outputs under one handle), after its entries, payloads,
      // accounting and tool results were written inside the transaction.
      const secondSeq = draft.appendTurn(2, { requestText: "a payload no other batch has" });
      const failing = draft.batch(secondSeq, {
        toolOutputs: [
          { handle: "out-1", toolName: "lookup", callId: "call-2", bytes: 10, lines: 1, path: "/tmp/a" },
          { handle: "out-1", toolName: "lookup", callId: "call-2", bytes: 10, lines: 1, path: "/tmp/a" },
        ],
      });
      const late = await charterErrorOf(store.appendCommit(failing));
      expect(late.code).toBe("ARGUMENT_INVALID");
      expect(late.details.reason).toBe("duplicate_record");

      expect(await store.statistics()).toEqual(before);
      const run = await store.getRun("run-atomic");
      expect(run).toMatchObject({ entryCount: 5, accountingCount: 2, toolResultCount: 1 });
      expect(run?.totals.turns).toBe(1);
      expect(await store.readCheckpoint("run-atomic", secondSeq)).toBeNull();
      expect((await store.latestCheckpoint("run-atomic"))?.seq).toBe(firstSeq);
      for (const payload of failing.rawPayloads ?? []) {
        if (!(firstBatch.rawPayloads ?? []).some((earlier) => earlier.hash === payload.hash)) {
          expect(await store.readRaw("run-atomic", payload.hash)).toBeNull();
        }
      }
      expect(await store.listToolOutputs("run-atomic")).toEqual([]);
      expect((await store.readToolResults("run-atomic")).length).toBe(1);

      // The same batch without the fault goes through, and the chain is whole.
      await store.appendCommit({ ...failing, toolOutputs: [] });
      expect(await verifyStoredRun(store, "run-atomic")).toMatchObject({ ok: true, entries: 10 });
    });

    it("refuses a batch that is not one consecutive chain or whose checkpoint covers no COMMIT of the batch", async () => {
      const { store, environment } = current();
      const draft = draftRun(environment, "run-batches");
      await createDraftedRun(store, draft);
      const commitSeq = draft.appendTurn(1);
      const batch = draft.batch(commitSeq);
      const entries = batch.entries ?? [];
      const gap = await charterErrorOf(
        store.appendCommit({ ...batch, entries: [entries[0]!, entries[2]!], checkpoint: null }),
      );
      expect(gap.details.reason).toBe("batch_invalid");
      const notCommit = await charterErrorOf(
        store.appendCommit({ ...batch, checkpoint: { seq: commitSeq - 1, document: { v: 1 } } }),
      );
      expect(notCommit.details.reason).toBe("batch_invalid");
      const unversioned = await charterErrorOf(
        store.appendCommit({ ...batch, checkpoint: { seq: commitSeq, document: {} as { v: number } } }),
      );
      expect(unversioned.details.reason).toBe("batch_invalid");
      // What a segment's lines cannot hold is refused, not stored wrong: a raw newline, a hash with a space, an
      // empty entry line (canonical JSON and BLAKE3 hex, which the transcript writes, are never any of these).
      const payload = (batch.rawPayloads ?? [])[0]!;
      for (const unstorable of [
        { ...batch, rawPayloads: [{ ...payload, json: '{\n"a": 1\n}' }] },
        { ...batch, rawPayloads: [{ ...payload, hash: "x y" }] },
        { ...batch, entries: [{ ...entries[0]!, line: "" }, ...entries.slice(1)] },
      ]) {
        const refused = await charterErrorOf(store.appendCommit(unstorable));
        expect(refused.code).toBe("ARGUMENT_INVALID");
        expect(refused.details.reason).toBe("batch_invalid");
      }
      const unknownRun = await charterErrorOf(store.appendCommit({ ...batch, runId: "run-nobody" }));
      expect(unknownRun.code).toBe("RUN_NOT_FOUND");
      expect((await store.getRun("run-batches"))?.entryCount).toBe(0);
      await store.appendCommit(batch);
      expect((await store.getRun("run-batches"))?.entryCount).toBe(5);
    });

    it("keeps every checkpoint and returns the latest; none before the first COMMIT", async () => {
      const { store, environment } = current();
      const draft = draftRun(environment, "run-checkpoints");
      await createDraftedRun(store, draft);
      expect(await store.latestCheckpoint("run-checkpoints")).toBeNull();
      const commitSeqs: number[] = [];
      let lastCommittedAt = 0;
      for (let turn = 1; turn <= 3; turn++) {
        const seq = draft.appendTurn(turn);
        commitSeqs.push(seq);
        lastCommittedAt = environment.now();
        await store.appendCommit(draft.batch(seq));
      }
      // Entries without a checkpoint (a flush mid-turn) do not move the latest checkpoint.
      draft.appendTurn(4);
      const partial = draft.take();
      await store.appendCommit({
        runId: "run-checkpoints",
        entries: partial.entries.slice(0, 3),
        rawPayloads: partial.rawPayloads,
      });

      const latest = await store.latestCheckpoint("run-checkpoints");
      expect(latest).toEqual({
        runId: "run-checkpoints",
        seq: commitSeqs[2],
        turn: 3,
        createdAt: lastCommittedAt,
        document: checkpointDocument(3, commitSeqs[2]!),
      });
      expect((await store.readCheckpoint("run-checkpoints", commitSeqs[0]!))?.document).toMatchObject({
        step_index: 1,
        completed_step_id: "turn-1/commit",
      });
      expect(await store.readCheckpoint("run-checkpoints", commitSeqs[0]! + 1)).toBeNull();
      expect((await store.statistics()).checkpoints).toBe(3);
      expect((await store.getRun("run-checkpoints"))?.entryCount).toBe(18);
    });

    it("keeps each run's raw payloads with the run, content-addressed, a shared one readable from both", async () => {
      const { store, environment } = current();
      const first = draftRun(environment, "run-raw-a");
      const second = draftRun(environment, "run-raw-b");
      await createDraftedRun(store, first);
      await createDraftedRun(store, second);
      const shared = "the same long system prompt and question, sent by both runs";
      await store.appendCommit(first.batch(first.appendTurn(1, { requestText: shared })));
      const afterFirst = await store.statistics();
      await store.appendCommit(second.batch(second.appendTurn(1, { requestText: shared })));
      const afterSecond = await store.statistics();
      // Each run stored a request and a response (the requests byte-identical); a run's payloads are kept with it.
      expect(afterFirst.rawPayloads).toBe(2);
      expect(afterSecond.rawPayloads).toBe(4);
      const firstHashes = (await collectPages(store.readRunRawPayloads("run-raw-a"))).map(
        (payload) => payload.hash,
      );
      const secondHashes = (await collectPages(store.readRunRawPayloads("run-raw-b"))).map(
        (payload) => payload.hash,
      );
      expect(firstHashes).toHaveLength(2);
      expect(secondHashes).toHaveLength(2);
      expect(firstHashes.filter((hash) => secondHashes.includes(hash))).toHaveLength(1);
      expect(await verifyStoredRun(store, "run-raw-a")).toMatchObject({ ok: true });
      expect(await verifyStoredRun(store, "run-raw-b")).toMatchObject({ ok: true });
      const sharedHash = firstHashes.find((hash) => secondHashes.includes(hash))!;
      expect(await store.readRaw("run-raw-a", sharedHash)).toBe(first.memory.raw.get(sharedHash));
      expect(await store.readRaw("run-raw-b", sharedHash)).toBe(first.memory.raw.get(sharedHash));
      expect(await store.readRaw("run-raw-b", "0".repeat(64))).toBeNull();
    });

    it("keeps large entries and payloads byte for byte", async () => {
      const { store, environment } = current();
      const draft = draftRun(environment, "run-large");
      await createDraftedRun(store, draft);
      const bigOutput = `${"ünïcödé ✓ ".repeat(150_000)}\n${"x".repeat(1_000_000)}`;
      const bigRequest = "r".repeat(5_000_000);
      await store.appendCommit(
        draft.batch(draft.appendTurn(1, { toolOutput: bigOutput, requestText: bigRequest })),
      );
      const lines = await collectPages(store.readEntryLines("run-large"));
      expect(lines.map((stored) => `${stored.line}\n`)).toEqual(draft.memory.lines);
      const execute = (await collect(store.readEntries("run-large"))).find(
        (entry) => entry.state === "EXECUTE",
      );
      expect((execute?.result as { output?: string } | undefined)?.output).toBe(bigOutput);
      expect(await verifyStoredRun(store, "run-large")).toMatchObject({ ok: true, entries: 5 });
      expect((await store.statistics()).rawPayloadBytes).toBeGreaterThan(5_000_000);
    });

    it("writes two runs concurrently without mixing them", async () => {
      const { store, environment } = current();
      const drafts = [draftRun(environment, "run-left"), draftRun(environment, "run-right")];
      for (const draft of drafts) await createDraftedRun(store, draft);
      await Promise.all(
        drafts.map(async (draft) => {
          for (let turn = 1; turn <= 6; turn++) await store.appendCommit(draft.batch(draft.appendTurn(turn)));
        }),
      );
      for (const draft of drafts) {
        expect(await verifyStoredRun(store, draft.runId)).toEqual({
          ok: true,
          entries: 30,
          head_hash: draft.transcript.headHash,
          first_bad_entry: null,
        });
        expect(
          (await store.readAccounting(draft.runId)).every((entry) => entry.txnId === `${draft.runId}-txn`),
        ).toBe(true);
      }
    });

    it("lets exactly one of two writers continue the same chain", async () => {
      const { store, environment } = current();
      const draft = draftRun(environment, "run-contended");
      await createDraftedRun(store, draft);
      const batch = draft.batch(draft.appendTurn(1));
      const results = await Promise.allSettled([store.appendCommit(batch), store.appendCommit(batch)]);
      expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
      const rejected = results.find((result) => result.status === "rejected");
      const reason = (rejected as PromiseRejectedResult).reason as CharterError;
      expect(reason.code).toBe("ARGUMENT_INVALID");
      expect(reason.details.reason).toBe("chain_mismatch");
      expect(await verifyStoredRun(store, "run-contended")).toMatchObject({ ok: true, entries: 5 });
      expect((await store.getRun("run-contended"))?.accountingCount).toBe(2);
    });

    it("reads a running run at its newest batch, and fences a writer whose view of the run is stale", async () => {
      // Two stores over one database, as two processes would hold it: each knows the progress of the runs it
      // wrote, which the other's batches make stale.
      const { store, environment, reopen } = current();
      const other = await reopen();
      const draft = draftRun(environment, "run-two-stores");
      await createDraftedRun(store, draft);
      await store.appendCommit(draft.batch(draft.appendTurn(1)));
      const second = draft.batch(draft.appendTurn(2));
      environment.advance(1_000);
      expect(await other.appendCommit(second)).toEqual({
        entryCount: 10,
        headHash: draft.transcript.headHash,
      });

      // The first store still knows the run as it left it after turn 1: the batch it sends now is refused, as
      // not continuing the chain, and nothing of it is stored.
      const stale = await charterErrorOf(store.appendCommit(second));
      expect(stale.code).toBe("ARGUMENT_INVALID");
      expect(stale.details.reason).toBe("chain_mismatch");
      expect(stale.details).toMatchObject({ expectedSeq: 10, batchSeq: 5 });

      // Both read the run where it stands, through its running row's newest batch.
      const progress = {
        status: "running",
        entryCount: 10,
        headHash: draft.transcript.headHash,
        accountingCount: 4,
        toolResultCount: 2,
        updatedAt: environment.now(),
        totals: { turns: 2, tokensIn: 200, tokensOut: 40, toolsUsed: ["lookup"] },
      };
      expect(await store.getRun("run-two-stores")).toMatchObject(progress);
      expect(await other.getRun("run-two-stores")).toMatchObject(progress);
      expect((await store.listRuns()).find((run) => run.runId === "run-two-stores")).toMatchObject(progress);

      // The first store continues the chain once it has read it afresh.
      const third = draft.batch(draft.appendTurn(3));
      expect(await store.appendCommit(third)).toMatchObject({ entryCount: 15 });

      // Now the second store's view is stale. Its last batch, stopping the run where it left it, is refused
      // the same way, and the run keeps running: its row is not brought to the stale progress.
      const staleFinish = await charterErrorOf(
        other.finishRun({ ...third, status: "completed", outcome: "COMPLETED_WITH_TOOLS" }),
      );
      expect(staleFinish.details).toMatchObject({ reason: "chain_mismatch", expectedSeq: 15, batchSeq: 10 });
      expect(await other.getRun("run-two-stores")).toMatchObject({
        status: "running",
        entryCount: 15,
        headHash: draft.transcript.headHash,
        accountingCount: 6,
        toolResultCount: 3,
        finishedAt: null,
      });
      expect(await verifyStoredRun(other, "run-two-stores")).toMatchObject({ ok: true, entries: 15 });
      expect((await other.readAccounting("run-two-stores")).map((entry) => entry.turn)).toEqual([
        1, 1, 2, 2, 3, 3,
      ]);
      expect((await other.readToolResults("run-two-stores")).map((result) => result.turn)).toEqual([1, 2, 3]);

      // Stopped by the second store, the run reads the same from both, and the first store appends nothing more.
      await other.finishRun({
        runId: "run-two-stores",
        status: "completed",
        outcome: "COMPLETED_WITH_TOOLS",
      });
      const finished = await other.getRun("run-two-stores");
      expect(finished).toMatchObject({ status: "completed", entryCount: 15, accountingCount: 6 });
      expect(await store.getRun("run-two-stores")).toEqual(finished);
      draft.appendTurn(4);
      const late = await charterErrorOf(store.appendCommit(draft.batch(draft.transcript.entryCount - 1)));
      expect(late.details.reason).toBe("run_not_running");
    });

    it("finishes a run with its last batch, refuses entries afterwards, and reopens it for resuming", async () => {
      const { store, environment } = current();
      const draft = draftRun(environment, "run-finish");
      await createDraftedRun(store, draft);
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
      environment.advance(1_000);
      const { entries, rawPayloads } = draft.take();
      const receipt = await store.finishRun({
        runId: "run-finish",
        entries,
        rawPayloads,
        status: "awaiting_approval",
        outcome: "INTERRUPTED",
        errorCode: "INTERRUPTED",
        statusReason: "approval_required",
        finalReport: { status: "failure", content: "waiting for approval of call-7" },
      });
      expect(receipt).toEqual({ entryCount: 6, headHash: draft.transcript.headHash });
      expect(await store.getRun("run-finish")).toMatchObject({
        status: "awaiting_approval",
        outcome: "INTERRUPTED",
        errorCode: "INTERRUPTED",
        statusReason: "approval_required",
        finishedAt: environment.now(),
        finalReport: { status: "failure", content: "waiting for approval of call-7" },
      });
      expect((await store.listRuns({ status: "awaiting_approval" })).map((run) => run.runId)).toEqual([
        "run-finish",
      ]);

      draft.appendTurn(2);
      const refused = await charterErrorOf(store.appendCommit(draft.batch(draft.transcript.entryCount - 1)));
      expect(refused.details.reason).toBe("run_not_running");
      expect((await store.getRun("run-finish"))?.entryCount).toBe(6);

      const reopened = await store.reopenRun("run-finish");
      expect(reopened).toMatchObject({
        status: "running",
        outcome: null,
        finishedAt: null,
        statusReason: null,
      });
      expect(reopened.entryCount).toBe(6);

      await store.finishRun({ runId: "run-finish", status: "completed", outcome: "COMPLETED_WITH_TOOLS" });
      const notAllowed = await charterErrorOf(store.reopenRun("run-finish"));
      expect(notAllowed.details.reason).toBe("status_not_allowed");
      // A resume that read the run before another one moved it on reopens nothing.
      const moved = await charterErrorOf(
        store.reopenRun("run-finish", {
          from: ["completed"],
          expected: { entryCount: 5, headHash: "0".repeat(64) },
        }),
      );
      expect(moved.details.reason).toBe("chain_mismatch");
      expect((await store.getRun("run-finish"))?.status).toBe("completed");
      const stored = await store.getRun("run-finish");
      const asRead = { entryCount: stored?.entryCount ?? -1, headHash: stored?.headHash ?? "" };
      expect((await store.reopenRun("run-finish", { from: ["completed"], expected: asRead })).status).toBe(
        "running",
      );
      expect((await charterErrorOf(store.reopenRun("run-nobody"))).code).toBe("RUN_NOT_FOUND");
      const running = await charterErrorOf(
        store.finishRun({ runId: "run-finish", status: "running" as "completed", outcome: null }),
      );
      expect(running.details.reason).toBe("batch_invalid");
    });
  });
}
