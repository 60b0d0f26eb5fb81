import { afterEach, describe, expect, it } from "vitest";
import {
  createPgBossRunDispatcher,
  type PgBossRunDispatcher,
} from "../../src/server/workers/pg-boss-run-dispatcher.js";
import {
  eventually,
  executionContext,
  postgresTestStore,
  postgresTestUrl,
  reportStep,
  runRequest,
  type ServerWorkspace,
  serverWorkspace,
  type TestStore,
  toolAnswers,
} from "./execution-harness.js";

let workspace: ServerWorkspace | null = null;
let testStore: TestStore | null = null;
let dispatcher: PgBossRunDispatcher | null = null;

afterEach(async () => {
  await dispatcher?.close();
  dispatcher = null;
  await testStore?.dispose();
  testStore = null;
  await workspace?.close();
  workspace = null;
});

const never = new AbortController().signal;

describe.skipIf(postgresTestUrl === "")(
  "the pg-boss run dispatcher with workers in the server's process",
  () => {
    it("queues runs and decisions through pg-boss, and cancels a run nobody runs yet", async () => {
      workspace = await serverWorkspace({
        respond: (request) =>
          toolAnswers(request) === 0
            ? { kind: "tool_calls", calls: [{ id: "rm", name: "rest__remove", arguments: { key: "x" } }] }
            : reportStep("removed x"),
      });
      testStore = await postgresTestStore();
      dispatcher = await createPgBossRunDispatcher({
        context: executionContext(workspace, testStore.store),
        url: testStore.url,
        workers: 1,
        pollMilliseconds: 100,
        leaseMilliseconds: 3000,
      });
      const acme = testStore.store.forTenant("acme");
      const request = runRequest();
      await dispatcher.dispatch(request);
      await dispatcher.whenSettled("acme", request.runId, never);
      expect((await acme.getRunRequest(request.runId))?.state).toBe("AWAITING_APPROVAL");
      await dispatcher.decide({
        runId: request.runId,
        requestId: "req_ok",
        tenantId: "acme",
        userId: "boss",
        role: "admin",
        correlationId: request.correlationId,
        approve: ["rm"],
        deny: [],
      });
      await eventually("the approved run to complete", async () =>
        (await acme.getRunRequest(request.runId))?.state === "COMPLETED" ? true : null,
      );
      expect(workspace.tools.requests.map((sent) => `${sent.method} ${sent.path}`)).toEqual([
        "DELETE /items/x",
      ]);
      // A run waiting for its approval is cancelled where it stands: FAILED, and a later decision changes nothing.
      const waiting = runRequest();
      await dispatcher.dispatch(waiting);
      await dispatcher.whenSettled("acme", waiting.runId, never);
      expect(await dispatcher.cancel("acme", waiting.runId)).toBe(true);
      const events = await acme.readRunEvents(waiting.runId);
      expect(events.at(-1)).toMatchObject({ type: "FAILED", data: { cancelled: true } });
      expect(await dispatcher.cancel("acme", waiting.runId)).toBe(false);
    }, 60_000);
  },
);
