import { afterEach, describe, expect, it } from "vitest";
import {
  createInProcessRunDispatcher,
  type InProcessRunDispatcher,
} from "../../src/server/execution/in-process-run-dispatcher.js";
import { createRunEventHub } from "../../src/server/execution/run-event-hub.js";
import { watchRunEvents } from "../../src/server/execution/watch-run-events.js";
import {
  eventually,
  executionContext,
  gate,
  heldWriteWorkspace,
  reportStep,
  runRequest,
  type ServerWorkspace,
  serverWorkspace,
  sqliteTestStore,
  type TestStore,
  testStoreOn,
  toolAnswers,
  wireMessages,
} from "./execution-harness.js";

let workspace: ServerWorkspace | null = null;
let testStore: TestStore | null = null;
const dispatchers: InProcessRunDispatcher[] = [];

afterEach(async () => {
  for (const dispatcher of dispatchers.splice(0)) await dispatcher.drain();
  await testStore?.dispose();
  testStore = null;
  await workspace?.close();
  workspace = null;
});

function dispatcherFor(space: ServerWorkspace, store: TestStore, workers = 2, leaseMilliseconds = 90_000) {
  const dispatcher = createInProcessRunDispatcher({
    context: executionContext(space, store.store),
    workers,
    leaseMilliseconds,
  });
  dispatchers.push(dispatcher);
  return dispatcher;
}

const never = new AbortController().signal;

describe("the in-process run dispatcher", () => {
  it("executes at most --workers runs at once, in the order accepted, and tells when each has settled", async () => {
    const release = gate();
    let arrived = 0;
    const twoArrived = gate();
    workspace = await serverWorkspace({
      respond: async (request) => {
        arrived += 1;
        if (arrived === 2) twoArrived.open();
        await release.opened;
        return reportStep(`done: ${wireMessages(request).at(-1)?.content}`);
      },
    });
    testStore = await sqliteTestStore(workspace.directory);
    const dispatcher = dispatcherFor(workspace, testStore, 2);
    const requests = [
      runRequest({ prompt: "one" }),
      runRequest({ prompt: "two" }),
      runRequest({ prompt: "three" }),
    ];
    for (const request of requests) await dispatcher.dispatch(request);
    await twoArrived.opened;
    const acme = testStore.store.forTenant("acme");
    // Two runs hold both slots: the third is accepted and stored, not started.
    expect((await acme.getRunRequest(requests[2]!.runId))?.state).toBe("REQUESTED");
    expect(arrived).toBe(2);
    release.open();
    for (const request of requests) await dispatcher.whenSettled("acme", request.runId, never);
    for (const request of requests)
      expect((await acme.getRunRequest(request.runId))?.state).toBe("COMPLETED");
    const prompts = workspace.model.requests.map((sent) => wireMessages(sent).at(-1)?.content);
    // The first two start together on the two workers, so which reaches the model first is a race; the third
    // starts only when a slot frees, after both.
    expect(prompts.slice(0, 2).sort()).toEqual(["one", "two"]);
    expect(prompts[2]).toBe("three");
    expect(prompts).toHaveLength(3);
  });

  it("streams a run's events live from the start, or after a number, ending with its last event", async () => {
    const release = gate();
    workspace = await serverWorkspace({
      respond: async (request) => {
        await release.opened;
        return toolAnswers(request) === 0
          ? { kind: "tool_calls", calls: [{ id: "c1", name: "rest__read", arguments: { key: "a" } }] }
          : reportStep("read a");
      },
    });
    testStore = await sqliteTestStore(workspace.directory);
    const events = createRunEventHub();
    const dispatcher = createInProcessRunDispatcher({
      context: executionContext(workspace, testStore.store, { events }),
    });
    dispatchers.push(dispatcher);
    const request = runRequest();
    await dispatcher.dispatch(request);
    const acme = testStore.store.forTenant("acme");
    // A long poll interval: the events of this process arrive through the hub, not by polling.
    const live = (async () => {
      const seen: string[] = [];
      for await (const event of watchRunEvents(acme, request.runId, { events, pollMilliseconds: 60_000 }))
        seen.push(`${event.sequence}:${event.type}`);
      return seen;
    })();
    release.open();
    expect(await live).toEqual(["1:REQUESTED", "2:ROUTED", "3:EXECUTING", "4:TOOL_CALL", "5:COMPLETED"]);
    const resumed: number[] = [];
    for await (const event of watchRunEvents(acme, request.runId, { afterSequence: 3 }))
      resumed.push(event.sequence);
    expect(resumed).toEqual([4, 5]);
    // Another tenant's run is not found.
    await expect(
      (async () => {
        for await (const _ of watchRunEvents(testStore!.store.forTenant("globex"), request.runId)) break;
      })(),
    ).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
  });

  it("cancels a running run at its next checkpoint (FAILED, cancelled) and a queued one before it starts", async () => {
    const firstAsked = gate();
    workspace = await serverWorkspace({
      respond: async (request) => {
        firstAsked.open();
        // Held until the run is stopped: the model call is abandoned by the cancellation.
        await new Promise(() => {});
        return reportStep(String(request.completionIndex));
      },
    });
    testStore = await sqliteTestStore(workspace.directory);
    const dispatcher = dispatcherFor(workspace, testStore, 1);
    const running = runRequest();
    const queued = runRequest();
    await dispatcher.dispatch(running);
    await dispatcher.dispatch(queued);
    await firstAsked.opened;
    expect(await dispatcher.cancel("acme", queued.runId)).toBe(true);
    expect(await dispatcher.cancel("acme", running.runId)).toBe(true);
    // Another tenant cannot cancel it (nor learn it exists).
    expect(await dispatcher.cancel("globex", running.runId)).toBe(false);
    await dispatcher.whenSettled("acme", running.runId, never);
    await dispatcher.whenSettled("acme", queued.runId, never);
    const acme = testStore.store.forTenant("acme");
    const ran = await acme.readRunEvents(running.runId);
    expect(ran.map((event) => event.type)).toEqual(["REQUESTED", "ROUTED", "EXECUTING", "FAILED"]);
    expect(ran.at(-1)?.data).toMatchObject({ cancelled: true, outcome: "INTERRUPTED" });
    expect((await acme.readRunEvents(queued.runId)).map((event) => event.type)).toEqual([
      "REQUESTED",
      "FAILED",
    ]);
    expect(await acme.getRun(queued.runId)).toBeNull();
    expect(await dispatcher.cancel("acme", running.runId)).toBe(false);
  });

  it("resumes a run stopped for an approval with the human's decision through the durable resume", async () => {
    workspace = await serverWorkspace({
      respond: (request) =>
        toolAnswers(request) === 0
          ? {
              kind: "tool_calls",
              calls: [{ id: "call_rm", name: "rest__remove", arguments: { key: "old" } }],
            }
          : reportStep(`removed: ${wireMessages(request).at(-1)?.content?.slice(0, 40)}`),
    });
    testStore = await sqliteTestStore(workspace.directory);
    const dispatcher = dispatcherFor(workspace, testStore);
    const request = runRequest({ prompt: "Remove old." });
    await dispatcher.dispatch(request);
    await dispatcher.whenSettled("acme", request.runId, never);
    const acme = testStore.store.forTenant("acme");
    expect((await acme.getRunRequest(request.runId))?.state).toBe("AWAITING_APPROVAL");
    await dispatcher.decide({
      runId: request.runId,
      requestId: "req_approve",
      tenantId: "acme",
      userId: "boss",
      role: "operator",
      correlationId: request.correlationId,
      approve: ["call_rm"],
      deny: [],
    });
    // A decision for a run that no longer waits (or another tenant's run) is refused at once.
    const again = {
      runId: request.runId,
      requestId: "req_again",
      tenantId: "acme",
      userId: "boss",
      role: "operator" as const,
      correlationId: request.correlationId,
      approve: ["call_rm"],
      deny: [],
    };
    await expect(dispatcher.decide({ ...again, tenantId: "globex" })).rejects.toMatchObject({
      code: "RUN_NOT_FOUND",
    });
    await eventually("the decision to be applied", async () =>
      (await acme.getRunRequest(request.runId))?.state === "COMPLETED" ? true : null,
    );
    expect(workspace.tools.requests.map((sent) => sent.method)).toEqual(["DELETE"]);
    await expect(dispatcher.decide(again)).rejects.toMatchObject({
      code: "RUN_NOT_RESUMABLE",
      details: { reason: "not_awaiting_approval", state: "COMPLETED" },
    });
  });

  it("drains: running tool calls finish, the run stops at its checkpoint, and the next process continues it", async () => {
    const { workspace, writeHeld: toolHeld, releaseWrite: releaseTool } = await heldWriteWorkspace();
    const testStore = await testStoreOn("sqlite", workspace.directory);
    const first = dispatcherFor(workspace, testStore);
    const request = runRequest();
    await first.dispatch(request);
    await toolHeld.opened;
    const drained = first.drain();
    releaseTool.open();
    await drained;
    const acme = testStore.store.forTenant("acme");
    expect((await acme.getRun(request.runId))?.status).toBe("interrupted");
    expect((await acme.getRunRequest(request.runId))?.state).toBe("EXECUTING");
    // The write ran once, and its result was kept: the model was not asked again in this process.
    expect(workspace.tools.requests).toHaveLength(1);
    expect(workspace.model.requests).toHaveLength(1);
    await expect(first.dispatch(runRequest())).rejects.toMatchObject({ code: "INTERRUPTED" });
    const second = dispatcherFor(workspace, testStore);
    await second.start();
    await second.whenSettled("acme", request.runId, never);
    expect((await acme.getRunRequest(request.runId))?.state).toBe("COMPLETED");
    expect(workspace.tools.requests).toHaveLength(1);
    const events = await acme.readRunEvents(request.runId);
    expect(events.map((event) => event.type)).toEqual([
      "REQUESTED",
      "ROUTED",
      "EXECUTING",
      "TOOL_CALL",
      "ROUTED",
      "EXECUTING",
      "COMPLETED",
    ]);
    expect(events[5]?.data).toMatchObject({ resumed: true, taken_over: true });
  });
});
