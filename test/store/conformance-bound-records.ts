import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";
import type { TranscriptEntryInput } from "../../src/session/transcript-sink.js";
import { createStoreTranscriptWriter } from "../../src/store/store-transcript-writer.js";
import { verifyStoredRun } from "../../src/store/verify-stored-run.js";
import { createHashChainTranscript } from "../../src/transcript/hash-chain-transcript.js";
import type { ConformanceContext } from "./run-store-conformance.js";
import {
  checkpointDocument,
  type StoreUnderTest,
  storeTestContract,
  turnToolResult,
} from "./store-harness.js";

/**
 * Stores a run as a durable session does, through the store-backed writer connected to its transcript: a PRECHECK
 * declaring its records bound, two turns each with a tool result stored before the next call and a checkpoint at its
 * COMMIT, and an interrupted end. Returns the seq of each checkpoint.
 */
async function storeBoundRun(underTest: StoreUnderTest, runId: string): Promise<number[]> {
  const { environment } = underTest;
  const store = underTest.store.forTenant("acme");
  const contract = storeTestContract();
  const writer = createStoreTranscriptWriter({
    store,
    agentId: contract.agent_id,
    tenantId: "acme",
    correlationId: "req-42",
  });
  const transcript = createHashChainTranscript({
    runId,
    contractHash: contract.contract_hash,
    adapterVersion: contract.adapter_version,
    modelProfileId: contract.model_profile_id,
    redactor: new SecretRedactor(),
    writer,
    environment,
  });
  transcript.writeContract(contract);
  const step = (state: TranscriptEntryInput["state"], turn: number, action: unknown, result: unknown) =>
    transcript.append({
      state,
      step_id: `turn-${turn}/${state.toLowerCase()}`,
      turn,
      timestamp: environment.now(),
      action,
      result,
      model_fingerprint: null,
    });
  step(
    "PRECHECK",
    0,
    { checks: [], run: { tenant_id: "acme", correlation_id: "req-42", bound_records: 1 } },
    { ok: true, problems: [] },
  );
  const checkpoints: number[] = [];
  for (let turn = 1; turn <= 2; turn++) {
    step("INFER", turn, { request_hash: `request-${turn}` }, { status: "ok" });
    // The turn's first call's result, stored before its second call starts.
    await writer.storeToolResults([turnToolResult(turn)]);
    step("EXECUTE", turn, { calls: [] }, { results: [] });
    step("COMMIT", turn, {}, { next: "INFER" });
    const seq = transcript.entryCount - 1;
    checkpoints.push(seq);
    await writer.commit({
      checkpoint: checkpointDocument(turn, seq),
      toolResults: [{ ...turnToolResult(turn), callId: `call-${turn}-b` }],
    });
    environment.advance(1_000);
  }
  step("TERMINATE", 2, {}, { outcome: "INTERRUPTED", error: { code: "INTERRUPTED", message: "stopped" } });
  await writer.finish({
    status: "interrupted",
    outcome: "INTERRUPTED",
    errorCode: "INTERRUPTED",
    statusReason: null,
    finalReport: null,
  });
  await transcript.close();
  return checkpoints;
}

export function describeBoundRecordsConformance({ current }: ConformanceContext): void {
  describe("records bound to the chain", () => {
    it("binds every checkpoint and tool result by a chained RECORD entry; an intact run verifies", async () => {
      const underTest = current();
      const checkpoints = await storeBoundRun(underTest, "run-bound");
      const store = underTest.store.forTenant("acme");
      expect(await verifyStoredRun(store, "run-bound")).toMatchObject({ ok: true, first_bad_entry: null });
      const records: unknown[] = [];
      for await (const entry of store.readEntries("run-bound"))
        if (entry.state === "RECORD") records.push(entry.result);
      // Each tool result stored before a call, and each COMMIT's checkpoint with the turn's last result.
      expect(records).toHaveLength(4);
      expect(records[1]).toMatchObject({
        checkpoint: { seq: checkpoints[0] },
        tool_results: [expect.any(String)],
      });
      expect((await store.readToolResults("run-bound")).map((result) => result.callId)).toEqual([
        "call-1",
        "call-1-b",
        "call-2",
        "call-2-b",
      ]);
    });

    it("names a checkpoint edited in the database", async () => {
      const underTest = current();
      const checkpoints = await storeBoundRun(underTest, "run-forged-checkpoint");
      expect(
        await underTest.tamper.editRecords("run-forged-checkpoint", "C", "You are a test agent.", "Obey me."),
      ).toBe(2);
      const report = await verifyStoredRun(underTest.store.forTenant("acme"), "run-forged-checkpoint");
      expect(report.ok).toBe(false);
      expect(report.first_bad_entry).toMatchObject({
        reason_code: "RECORD_MISMATCH",
        record: `checkpoint ${checkpoints[0]}`,
        seq: checkpoints[0],
      });
    });

    it("names a tool result edited in the database", async () => {
      const underTest = current();
      await storeBoundRun(underTest, "run-forged-result");
      expect(await underTest.tamper.editRecords("run-forged-result", "T", "value 2", "forged")).toBe(2);
      const report = await verifyStoredRun(underTest.store.forTenant("acme"), "run-forged-result");
      expect(report.first_bad_entry).toMatchObject({
        reason_code: "RECORD_MISMATCH",
        record: "tool_result 2",
      });
    });

    it("names a run row whose tenant, correlation id or status the chain does not say", async () => {
      const underTest = current();
      await storeBoundRun(underTest, "run-forged-row");
      // Moved to another tenant by hand: gone from its own, and named by that tenant's verification.
      await underTest.tamper.setRunColumn("run-forged-row", "tenant_id", "globex");
      expect(await underTest.store.forTenant("acme").getRun("run-forged-row")).toBeNull();
      expect(
        (await verifyStoredRun(underTest.store.forTenant("globex"), "run-forged-row")).first_bad_entry,
      ).toMatchObject({
        reason_code: "RECORD_MISMATCH",
        record: "run tenant_id",
      });
      await underTest.tamper.setRunColumn("run-forged-row", "tenant_id", "acme");
      expect((await verifyStoredRun(underTest.store.forTenant("acme"), "run-forged-row")).ok).toBe(true);
      await underTest.tamper.setRunColumn("run-forged-row", "status", "completed");
      expect(
        (await verifyStoredRun(underTest.store.forTenant("acme"), "run-forged-row")).first_bad_entry,
      ).toMatchObject({
        reason_code: "RECORD_MISMATCH",
        record: "run status",
      });
    });
  });
}
