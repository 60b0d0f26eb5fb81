import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import type { RunEventIdentity } from "../../src/store/run-event-records.js";
import type { ConformanceContext } from "./run-store-conformance.js";
import { draftRun } from "./store-harness.js";

function identity(runId: string, conversationId: string | null = null): RunEventIdentity {
  return { runId, requestId: `req_${runId}`, userId: "ann", correlationId: `corr_${runId}`, conversationId };
}

export function describeRunEventsConformance({ current }: ConformanceContext): void {
  describe("server run requests and lifecycle events", () => {
    it("numbers a run's events 1, 2, 3... and reads them after a number, for its tenant only", async () => {
      const { store, environment } = current();
      const acme = store.forTenant("acme");
      const requested = await acme.createRunRequest({
        event: { ...identity("run_a", "conv_1"), data: { agent: "helper" } },
        request: { runId: "run_a", prompt: "hello" },
      });
      expect(requested).toMatchObject({ sequence: 1, type: "REQUESTED", tenantId: "acme", userId: "ann" });
      for (const type of ["ROUTED", "EXECUTING", "TOOL_CALL", "TOOL_CALL", "COMPLETED"] as const) {
        environment.advance(5);
        await acme.appendRunEvent({ ...identity("run_a", "conv_1"), type, data: { type } });
      }
      const events = await acme.readRunEvents("run_a");
      expect(events.map((event) => [event.sequence, event.type])).toEqual([
        [1, "REQUESTED"],
        [2, "ROUTED"],
        [3, "EXECUTING"],
        [4, "TOOL_CALL"],
        [5, "TOOL_CALL"],
        [6, "COMPLETED"],
      ]);
      expect(events[1]).toMatchObject({
        runId: "run_a",
        requestId: "req_run_a",
        correlationId: "corr_run_a",
        conversationId: "conv_1",
        data: { type: "ROUTED" },
      });
      expect(
        (await acme.readRunEvents("run_a", { afterSequence: 4 })).map((event) => event.sequence),
      ).toEqual([5, 6]);
      expect(await acme.getRunRequest("run_a")).toMatchObject({
        state: "COMPLETED",
        lastSequence: 6,
        request: { runId: "run_a", prompt: "hello" },
        conversationId: "conv_1",
      });
      // Another tenant (and the default one) sees nothing of it, and cannot append to it.
      expect(await store.forTenant("globex").readRunEvents("run_a")).toEqual([]);
      expect(await store.getRunRequest("run_a")).toBeNull();
      const refused = await store
        .forTenant("globex")
        .appendRunEvent({ ...identity("run_a"), type: "FAILED", data: {} })
        .catch((error: unknown) => error);
      expect(CharterError.isInstance(refused) && refused.details.reason).toBe("run_not_running");
      expect((await acme.readRunEvents("run_a")).length).toBe(6);
      // Nothing follows the end of a lifecycle, even for its own tenant.
      const late = await acme
        .appendRunEvent({ ...identity("run_a", "conv_1"), type: "FAILED", data: {} })
        .catch((error: unknown) => error);
      expect(CharterError.isInstance(late) && late.details.reason).toBe("run_not_running");
      // A run id is accepted once, whoever asks.
      const again = await store
        .forTenant("globex")
        .createRunRequest({ event: { ...identity("run_a"), data: {} }, request: {} })
        .catch((error: unknown) => error);
      expect(CharterError.isInstance(again) && again.details.reason).toBe("run_exists");
    });

    it("gives concurrent appends of one run distinct, gapless numbers", async () => {
      const { store } = current();
      await store.createRunRequest({ event: { ...identity("run_c"), data: {} }, request: {} });
      await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          store.appendRunEvent({ ...identity("run_c"), type: "TOOL_CALL", data: { index } }),
        ),
      );
      const sequences = (await store.readRunEvents("run_c")).map((event) => event.sequence);
      expect(sequences).toEqual(Array.from({ length: 21 }, (_, index) => index + 1));
    });

    it("lists a conversation's runs, records cancellation, and lists unsettled runs for takeover", async () => {
      const { store, environment } = current();
      const acme = store.forTenant("acme");
      for (const runId of ["run_1", "run_2"]) {
        environment.advance(10);
        await acme.createRunRequest({ event: { ...identity(runId, "conv"), data: {} }, request: { runId } });
      }
      await store.forTenant("globex").createRunRequest({
        event: { ...identity("run_3", "conv"), data: {} },
        request: {},
      });
      expect((await acme.listConversationRequests("conv")).map((request) => request.runId)).toEqual([
        "run_1",
        "run_2",
      ]);
      expect(await acme.requestRunCancel("run_2")).toBe(true);
      expect(await store.requestRunCancel("run_2")).toBe(false);
      await acme.appendRunEvent({ ...identity("run_1", "conv"), type: "FAILED", data: {} });
      expect(await acme.requestRunCancel("run_1")).toBe(false);
      const unsettled = await store.listUnsettledRunRequests();
      expect(unsettled.map((request) => [request.runId, request.tenantId])).toEqual([
        ["run_2", "acme"],
        ["run_3", "globex"],
      ]);
      expect(unsettled[0]?.cancelRequestedAt).not.toBeNull();
      expect(unsettled[0]?.run).toBeNull();
    });

    it("takes over a running run only once its heartbeat is older than the lease, and only once", async () => {
      const { store, environment } = current();
      const acme = store.forTenant("acme");
      const draft = draftRun(environment, "run_owned");
      const dead = { pid: 1, host: "gone", startedAt: 1 };
      await acme.createRun({
        header: draft.memory.header!,
        contract: draft.contract,
        agentId: "a",
        owner: dead,
      });
      await acme.createRunRequest({ event: { ...identity("run_owned"), data: {} }, request: {} });
      const createdAt = environment.now();
      const next = { pid: 2, host: "alive", startedAt: 2 };
      expect(await acme.takeOverRun("run_owned", { owner: next, heartbeatBefore: createdAt })).toBe(false);
      environment.advance(1000);
      expect(await store.takeOverRun("run_owned", { owner: next, heartbeatBefore: createdAt + 1 })).toBe(
        false,
      );
      expect(await acme.takeOverRun("run_owned", { owner: next, heartbeatBefore: createdAt + 1 })).toBe(true);
      expect(await acme.takeOverRun("run_owned", { owner: dead, heartbeatBefore: createdAt + 1 })).toBe(
        false,
      );
      expect((await acme.getRun("run_owned"))?.owner).toEqual(next);
      const [listed] = await store.listUnsettledRunRequests();
      expect(listed?.run).toMatchObject({ status: "running", owner: next, heartbeatAt: createdAt + 1000 });
    });

    it("lists a tenant's queued runs (accepted, not started, not over), newest first", async () => {
      const { store, environment } = current();
      const acme = store.forTenant("acme");
      for (const runId of ["run_q1", "run_q2", "run_started", "run_cancelled"]) {
        environment.advance(10);
        await acme.createRunRequest({ event: { ...identity(runId), data: {} }, request: { runId } });
      }
      await store
        .forTenant("globex")
        .createRunRequest({ event: { ...identity("run_g"), data: {} }, request: {} });
      const draft = draftRun(environment, "run_started");
      await acme.createRun({ header: draft.memory.header!, contract: draft.contract, agentId: "a" });
      await acme.appendRunEvent({ ...identity("run_cancelled"), type: "FAILED", data: { cancelled: true } });
      expect((await acme.listQueuedRunRequests()).map((request) => request.runId)).toEqual([
        "run_q2",
        "run_q1",
      ]);
      expect((await acme.listQueuedRunRequests({ limit: 1 })).map((request) => request.runId)).toEqual([
        "run_q2",
      ]);
      expect(
        (await store.forTenant("globex").listQueuedRunRequests()).map((request) => request.runId),
      ).toEqual(["run_g"]);
      expect(await store.forTenant("initech").listQueuedRunRequests()).toEqual([]);
      // With started: the runs a worker has started too, still never those whose lifecycle is over.
      expect((await acme.listQueuedRunRequests({ started: true })).map((request) => request.runId)).toEqual([
        "run_started",
        "run_q2",
        "run_q1",
      ]);
      expect(
        (await store.forTenant("globex").listQueuedRunRequests({ started: true })).map(
          (request) => request.runId,
        ),
      ).toEqual(["run_g"]);
    });
  });
}
