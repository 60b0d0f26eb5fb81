import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { loadSessionCheckpoint } from "../../src/runner/load-session-checkpoint.js";
import { readPendingApprovals } from "../../src/runner/read-pending-approvals.js";
import { replayStoredRun } from "../../src/runner/replay-stored-run.js";
import type { RunStore } from "../../src/store/run-store.js";
import { verifyStoredRun } from "../../src/store/verify-stored-run.js";
import { charterErrorOf } from "./conformance-chain.js";
import type { ConformanceContext } from "./run-store-conformance.js";
import { collect, collectPages, createDraftedRun, draftRun, turnToolResult } from "./store-harness.js";

/** The stored-run fixture of a run waiting for the approval of `call_reserve`, as tenant `tenantId`'s. */
function awaitingApprovalExport(tenantId: string | null) {
  const path = resolve(import.meta.dirname, "../fixtures/store/v1/awaiting-approval.json");
  const exported = JSON.parse(readFileSync(path, "utf8")) as { run: Record<string, unknown> };
  // The fixture predates bound records: its chain does not bind the row's tenant, so it verifies for any tenant.
  return { ...exported, run: { ...exported.run, tenant_id: tenantId } };
}

/** What an operation answered: its value, or the code and reason of its CharterError. */
async function answerOf(operation: () => Promise<unknown>): Promise<unknown> {
  try {
    return { value: await operation() };
  } catch (error) {
    if (!CharterError.isInstance(error)) throw error;
    return { code: error.code, reason: error.details.reason ?? null };
  }
}

/**
 * Everything a store answers about a run: its row, every record read, what resume (its checkpoint, reopening),
 * approvals, verification, replay and export make of it, and the writes a run needs. The writes are ones that would
 * fail on the run as stored anyway (a batch that does not continue its chain, a finish of a run that is not running),
 * so that asking changes nothing.
 */
async function everythingAbout(store: RunStore, runId: string, options: { readonly writes: boolean }) {
  const page = (work: () => AsyncIterable<readonly unknown[]>) => answerOf(() => collectPages(work()));
  return {
    getRun: await answerOf(() => store.getRun(runId)),
    listed: (await store.listRuns()).some((run) => run.runId === runId),
    readEntries: await answerOf(() => collect(store.readEntries(runId))),
    readEntryLines: await page(() => store.readEntryLines(runId)),
    readEntryLineTexts: await page(() => store.readEntryLineTexts(runId)),
    readRunRawPayloads: await page(() => store.readRunRawPayloads(runId)),
    readRaw: await answerOf(async () => {
      const [first] = await collectPages(store.forTenant("acme").readRunRawPayloads(runId));
      return store.readRaw(runId, first?.hash ?? "0".repeat(64));
    }),
    latestCheckpoint: await answerOf(() => store.latestCheckpoint(runId)),
    readCheckpoint: await answerOf(() => store.readCheckpoint(runId, 5)),
    readCheckpoints: await answerOf(() => store.readCheckpoints(runId)),
    readAccounting: await answerOf(() => store.readAccounting(runId)),
    readToolResults: await answerOf(() => store.readToolResults(runId)),
    listToolOutputs: await answerOf(() => store.listToolOutputs(runId)),
    pendingApprovals: await answerOf(() => readPendingApprovals(store, runId)),
    sessionCheckpoint: await answerOf(() => loadSessionCheckpoint(store, runId)),
    verify: await answerOf(() => verifyStoredRun(store, runId)),
    replay: await answerOf(() => replayStoredRun(store, runId)),
    exportRun: await answerOf(() => store.exportRun(runId)),
    ...(options.writes ? await writesAbout(store, runId) : {}),
  };
}

async function writesAbout(store: RunStore, runId: string) {
  return {
    reopenRun: await answerOf(() => store.reopenRun(runId, { from: ["completed"] })),
    heartbeatRun: await answerOf(() => store.heartbeatRun(runId, { pid: 1, host: "h", startedAt: 0 })),
    finishRun: await answerOf(() =>
      store.finishRun({ runId, status: "completed", outcome: "COMPLETED_WITH_TOOLS" }),
    ),
    appendCommit: await answerOf(() => store.appendCommit({ runId, toolResults: [turnToolResult(1)] })),
    recordToolOutput: await answerOf(() =>
      store.recordToolOutput(runId, {
        handle: "out-9",
        toolName: "t",
        callId: "c",
        bytes: 1,
        lines: 1,
        path: "/p",
      }),
    ),
  };
}

export function describeTenantScopeConformance({ current }: ConformanceContext): void {
  describe("tenant scope", () => {
    it("answers another tenant's run as a run that is not stored: no row, record, approval, checkpoint, verification, replay or export", async () => {
      const { store } = current();
      const acme = store.forTenant("acme");
      const runId = "run_fixture_approval";
      await acme.importRun(awaitingApprovalExport("acme"));
      const before = await acme.getRun(runId);

      // Its own tenant reads it whole: so the same questions can tell a run from none.
      const own = await everythingAbout(acme, runId, { writes: false });
      expect(own.getRun).toMatchObject({ value: { runId, status: "awaiting_approval", tenantId: "acme" } });
      expect(own.listed).toBe(true);
      // The call it waits on, as resume reads it (this fixture's transcript predates `pending_approvals`).
      expect(own.latestCheckpoint).toMatchObject({
        value: { document: { pending_approval: { id: "call_reserve" } } },
      });
      expect(own.sessionCheckpoint).toMatchObject({ value: { completed_step_id: "turn-2/commit" } });
      expect(own.verify).toMatchObject({ value: { ok: true } });
      expect(own.replay).toMatchObject({ value: { ok: true } });
      expect(own.exportRun).toMatchObject({ value: { run: { run_id: runId } } });
      for (const read of ["readEntries", "readEntryLines", "readCheckpoints", "readToolResults"] as const)
        expect((own[read] as { value: unknown[] }).value.length).toBeGreaterThan(0);
      expect(own.readRaw).toMatchObject({ value: expect.any(String) });

      // Another tenant, and the default tenant, get exactly what a run id nobody stored gets.
      for (const stranger of [store.forTenant("globex"), store]) {
        const answers = await everythingAbout(stranger, runId, { writes: true });
        expect(answers).toEqual(await everythingAbout(stranger, "run-nobody", { writes: true }));
        expect(answers).toMatchObject({
          getRun: { value: null },
          listed: false,
          readEntries: { value: [] },
          pendingApprovals: { value: [] },
          sessionCheckpoint: { value: null },
          verify: { code: "RUN_NOT_FOUND" },
          replay: { code: "RUN_NOT_FOUND" },
          exportRun: { code: "RUN_NOT_FOUND" },
          reopenRun: { code: "RUN_NOT_FOUND" },
          heartbeatRun: { value: false },
          appendCommit: { code: "RUN_NOT_FOUND" },
          recordToolOutput: { code: "RUN_NOT_FOUND" },
        });
      }
      // Nothing the strangers tried changed the run.
      expect(await acme.getRun(runId)).toEqual(before);
      expect(await acme.listToolOutputs(runId)).toEqual((own.listToolOutputs as { value: unknown }).value);
    });

    it("keeps the default tenant's runs from a named tenant, and each store to its own tenant's writes", async () => {
      const { store, environment } = current();
      const acme = store.forTenant("acme");
      const draft = draftRun(environment, "run-default");
      const created = await createDraftedRun(store, draft);
      expect(created.tenantId).toBeNull();
      expect(store.tenantId).toBeNull();
      expect(acme.tenantId).toBe("acme");
      await store.appendCommit(draft.batch(draft.appendTurn(1)));
      expect(await acme.getRun("run-default")).toBeNull();
      expect(await collect(acme.readEntries("run-default"))).toEqual([]);
      expect((await charterErrorOf(acme.appendCommit(draft.batch(draft.appendTurn(2))))).code).toBe(
        "RUN_NOT_FOUND",
      );
      expect((await store.getRun("run-default"))?.entryCount).toBe(5);

      // A store creates and imports its own tenant's runs only.
      const other = draftRun(environment, "run-other");
      const refused = await charterErrorOf(
        acme.createRun({
          header: other.memory.header!,
          contract: other.contract,
          agentId: "a",
          tenantId: "globex",
        }),
      );
      expect(refused.details.reason).toBe("tenant_mismatch");
      expect((await charterErrorOf(acme.importRun(awaitingApprovalExport("globex")))).details.reason).toBe(
        "tenant_mismatch",
      );
      expect(await store.forTenant("globex").getRun("run-other")).toBeNull();
      expect(await store.forTenant("globex").getRun("run_fixture_approval")).toBeNull();
    });

    it("serves a cache entry to its own tenant only, whatever key another tenant asks with", async () => {
      const { store, environment } = current();
      const acme = store.forTenant("acme");
      const expiresAt = environment.now() + 60_000;
      await acme.cachePut({ key: "shared-key", server: "docs", tool: "search", value: "acme's", expiresAt });
      expect((await acme.cacheGet("shared-key"))?.value).toBe("acme's");
      expect(await store.forTenant("globex").cacheGet("shared-key")).toBeNull();
      expect(await store.cacheGet("shared-key")).toBeNull();
      const refused = await charterErrorOf(
        acme.cachePut({ key: "k", server: "docs", tool: "search", value: 1, expiresAt, tenantId: "globex" }),
      );
      expect(refused.details.reason).toBe("tenant_mismatch");
    });
  });
}
