import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { charterBinary } from "../cli/cli-harness.js";
import { nodeProcess } from "../node-process.js";
import {
  eventually,
  gate,
  heldWriteWorkspace,
  pgBossTestDispatcher,
  postgresTestUrl,
  reportStep,
  runOnTwoWorkers,
  runRequest,
  type ServerWorkspace,
  type serverWorkspace,
  startWorkerProcess,
  testStoreOn,
  testWorkspace,
  toolAnswers,
  wireMessages,
} from "./execution-harness.js";

/** Two runs at once per worker process. */
const twoAtOnce = { flags: ["--concurrency", "2"] };

/** A model that writes `one`, then writes `two`, then reports; counted at the tool server. */
function twoWritesThenReport(request: Parameters<Parameters<typeof serverWorkspace>[0]["respond"]>[0]) {
  const answered = toolAnswers(request);
  if (answered === 0)
    return {
      kind: "tool_calls" as const,
      calls: [{ id: "w1", name: "rest__record", arguments: { key: "one" } }],
    };
  if (answered === 1)
    return {
      kind: "tool_calls" as const,
      calls: [{ id: "w2", name: "rest__record", arguments: { key: "two" } }],
    };
  return reportStep(`finished after: ${wireMessages(request).at(-1)?.content?.slice(0, 60)}`);
}

function executions(space: ServerWorkspace, path: string): number {
  return space.tools.requests.filter((sent) => sent.method === "POST" && sent.path === path).length;
}

describe.skipIf(postgresTestUrl === "")("charter worker processes on PostgreSQL (pg-boss)", () => {
  it("a worker killed with kill -9 mid-run loses nothing: another takes the run over after its lease, no tool call repeated", async () => {
    const secondWriteHeld = gate();
    const releaseSecondWrite = gate();
    const workspace = await testWorkspace({
      respond: twoWritesThenReport,
      tool: async (request) => {
        if (request.path === "/items/two") {
          secondWriteHeld.open();
          await releaseSecondWrite.opened;
        }
        return { body: { recorded: request.path } };
      },
    });
    const testStore = await testStoreOn("postgres", workspace.directory);
    const dispatcher = await pgBossTestDispatcher(workspace, testStore);
    const request = runRequest({ prompt: "Record one, then two." });
    // The second turn's write is under way at the tool server: kill -9 the worker that runs it.
    const { owner: victim, other: survivor } = await runOnTwoWorkers(
      workspace,
      testStore,
      dispatcher,
      request,
      secondWriteHeld.opened,
    );
    const acme = testStore.store.forTenant("acme");
    victim.child.kill("SIGKILL");
    await victim.exited;
    releaseSecondWrite.open();
    // The other worker takes the run over once the lease has expired, and finishes it.
    await eventually(
      "the run to complete on the other worker",
      async () => ((await acme.getRunRequest(request.runId))?.state === "COMPLETED" ? true : null),
      40_000,
    );
    expect((await acme.getRun(request.runId))?.owner?.pid).toBe(survivor.child.pid);
    // No tool call ran twice: the completed first write is never repeated, and the write that was in flight when
    // the worker died is not run again (its outcome is unknown, and the model is told so).
    expect(executions(workspace, "/items/one")).toBe(1);
    expect(executions(workspace, "/items/two")).toBe(1);
    // Completed turns were not asked again: turn 1, turn 2 (on the killed worker), then the final turn.
    expect(workspace.model.requests).toHaveLength(3);
    expect(wireMessages(workspace.model.requests[2]!).at(-1)?.content).toContain("outcome unknown");
    const events = await acme.readRunEvents(request.runId);
    expect(events.map((event) => event.type)).toEqual([
      "REQUESTED",
      "ROUTED",
      "EXECUTING",
      "TOOL_CALL",
      "ROUTED",
      "EXECUTING",
      "TOOL_CALL",
      "COMPLETED",
    ]);
    expect(events[5]?.data).toMatchObject({ resumed: true, taken_over: true });
    expect(events.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  }, 90_000);

  it("SIGTERM drains a worker: the tool call under way finishes, the run stops at its checkpoint, another worker ends it", async () => {
    const { workspace, writeHeld, releaseWrite } = await heldWriteWorkspace();
    const testStore = await testStoreOn("postgres", workspace.directory);
    const dispatcher = await pgBossTestDispatcher(workspace, testStore);
    const first = startWorkerProcess(workspace, testStore, twoAtOnce);
    const request = runRequest({ prompt: "Record one." });
    await dispatcher.dispatch(request);
    await writeHeld.opened;
    first.child.kill("SIGTERM");
    await eventually("the worker to start draining", () => first.output().includes("draining"));
    releaseWrite.open();
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain("charter worker: stopped");
    const acme = testStore.store.forTenant("acme");
    expect((await acme.getRun(request.runId))?.status).toBe("interrupted");
    expect((await acme.getRunRequest(request.runId))?.state).toBe("EXECUTING");
    // The call finished before the worker stopped: its result is stored, and the model was not asked again.
    expect(executions(workspace, "/items/one")).toBe(1);
    expect(workspace.model.requests).toHaveLength(1);
    const second = startWorkerProcess(workspace, testStore, twoAtOnce);
    await dispatcher.whenSettled("acme", request.runId, new AbortController().signal);
    expect((await acme.getRunRequest(request.runId))?.state).toBe("COMPLETED");
    expect((await acme.getRun(request.runId))?.owner?.pid).toBe(second.child.pid);
    expect(executions(workspace, "/items/one")).toBe(1);
    expect(wireMessages(workspace.model.requests[1]!).at(-1)?.content).toContain("/items/one");
  }, 90_000);
});

describe("charter worker", () => {
  it("refuses a store that is not PostgreSQL, and bad flags, with exit code 4 before taking anything", async () => {
    const directory = await mkdtemp(join(tmpdir(), "charter-worker-"));
    const sqlite = await nodeProcess([charterBinary, "worker", "--store", join(directory, "charter.db")], {
      cwd: directory,
      env: { HOME: directory },
    });
    expect(sqlite.exitCode).toBe(4);
    expect(sqlite.stderr).toContain("PostgreSQL");
    const lease = await nodeProcess([charterBinary, "worker", "--lease", "soon"], {
      cwd: directory,
      env: { HOME: directory },
    });
    expect(lease.exitCode).toBe(4);
    expect(lease.stderr).toContain("--lease");
  });
});
