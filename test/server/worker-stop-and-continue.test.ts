import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { verifyStoredRun } from "../../src/store/verify-stored-run.js";
import { git, gitRepository } from "../work/git-fixture.js";
import {
  eventually,
  gate,
  pgBossTestDispatcher,
  postgresTestUrl,
  releasedAfterTest,
  reportStep,
  runOnTwoWorkers,
  runRequest,
  type ServerWorkspace,
  testStoreOn,
  testWorkspace,
  toolAnswers,
} from "./execution-harness.js";

function executions(space: ServerWorkspace, path: string): number {
  return space.tools.requests.filter((sent) => sent.method === "POST" && sent.path === path).length;
}

/**
 * A run whose model records `one`, then `two`, then reports (after `beforeReport`, when given), taken by one of two
 * worker processes, which is stopped with SIGSTOP while its second write is under way at the tool server.
 */
async function stoppedMidSecondWrite(beforeReport?: () => Promise<void>) {
  const secondWriteHeld = gate();
  const releaseSecondWrite = gate();
  const workspace = await testWorkspace({
    respond: async (request) => {
      const answered = toolAnswers(request);
      if (answered < 2) {
        const key = answered === 0 ? "one" : "two";
        return {
          kind: "tool_calls",
          calls: [{ id: `w${answered}`, name: "rest__record", arguments: { key } }],
        };
      }
      await beforeReport?.();
      return reportStep("recorded both");
    },
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
  // Each worker's lease is 3 s (startWorkerProcess): a worker silent for longer loses its runs. The second write
  // is under way at the tool server: the worker running it stops (no heartbeat, no progress).
  const request = runRequest({ prompt: "Record one, then two." });
  const { owner: stopped, other: survivor } = await runOnTwoWorkers(
    workspace,
    testStore,
    dispatcher,
    request,
    secondWriteHeld.opened,
  );
  stopped.child.kill("SIGSTOP");
  // The tool answers while its caller is stopped: the answer waits in the stopped process's socket.
  releaseSecondWrite.open();
  return { workspace, request, stopped, survivor, acme: testStore.store.forTenant("acme") };
}

describe.skipIf(postgresTestUrl === "")("charter worker processes that die or stop (PostgreSQL)", () => {
  it("a work item's worker killed with kill -9 after a completed tool call: another worker takes the item over after the lease, ends it and restores its repository; no tool call or commit is repeated", async () => {
    const otherWriteHeld = gate();
    const releaseOtherWrite = gate();
    const workspace = await testWorkspace({
      respond: (request) => {
        const answered = toolAnswers(request);
        if (answered === 0) {
          return {
            kind: "tool_calls",
            calls: [
              { id: "w0", name: "workspace__write_file", arguments: { path: "src/a.txt", content: "b\n" } },
            ],
          };
        }
        if (answered === 1) {
          return {
            kind: "tool_calls",
            calls: [{ id: "w1", name: "rest__record", arguments: { key: "two" } }],
          };
        }
        return reportStep("changed a");
      },
      tool: async (request) => {
        otherWriteHeld.open();
        await releaseOtherWrite.opened;
        return { body: { recorded: request.path } };
      },
    });
    const repository = releasedAfterTest(await gitRepository({ "src/a.txt": "a\n" }), (path) =>
      rm(path, { recursive: true, force: true }),
    );
    // The workers' configuration names the repository work items may change.
    const configurationPath = join(workspace.directory, ".charter.json");
    const configuration = JSON.parse(await readFile(configurationPath, "utf8")) as Record<string, unknown>;
    await writeFile(
      configurationPath,
      JSON.stringify({ ...configuration, server: { repositories: { service: repository } } }),
    );
    const commitsBefore = git(repository, "rev-list", "--count", "HEAD");
    const headBefore = git(repository, "rev-parse", "HEAD");
    const testStore = await testStoreOn("postgres", workspace.directory);
    const dispatcher = await pgBossTestDispatcher(workspace, testStore);
    const request = runRequest({
      v: 2,
      kind: "work-item",
      repository: "service",
      item: { id: "change-a", agent_id: "helper", description: "Change a to b." },
      prompt: null,
    });
    // The file write has completed (its result is in the transcript); the next call is under way: kill -9.
    const { owner: victim } = await runOnTwoWorkers(
      workspace,
      testStore,
      dispatcher,
      request,
      otherWriteHeld.opened,
    );
    const acme = testStore.store.forTenant("acme");
    expect(await readFile(join(repository, "src/a.txt"), "utf8")).not.toBe("a\n");
    victim.child.kill("SIGKILL");
    await victim.exited;
    // As if the dead worker had run on another machine: its lock names a host whose processes this one cannot see.
    // The expired lease is what says it is gone.
    const lockPath = join(repository, ".git", "charter-work.lock");
    const lock = JSON.parse(await readFile(lockPath, "utf8")) as Record<string, unknown>;
    await writeFile(lockPath, JSON.stringify({ ...lock, host: "another-machine.internal" }));
    releaseOtherWrite.open();
    const ended = await eventually(
      "the other worker to end the item",
      async () => {
        const state = (await acme.getRunRequest(request.runId))?.state;
        return state === "COMPLETED" || state === "FAILED" ? state : null;
      },
      40_000,
    );
    // The item cannot go on without the dead process's agent state: it ends interrupted, its tree restored.
    expect(ended).toBe("FAILED");
    const [receipt] = await acme.listWorkReceipts({ runId: request.runId });
    expect(receipt?.status).toBe("failure");
    expect(JSON.stringify(receipt?.receipt)).toContain("interrupted");
    expect(await readFile(join(repository, "src/a.txt"), "utf8")).toBe("a\n");
    // Nothing ran twice: the model was not asked again, the call in flight was not repeated, no commit was made.
    expect(workspace.model.requests).toHaveLength(2);
    expect(workspace.tools.requests.filter((sent) => sent.path === "/items/two")).toHaveLength(1);
    expect(git(repository, "rev-list", "--count", "HEAD")).toBe(commitsBefore);
    expect(git(repository, "rev-parse", "HEAD")).toBe(headBefore);
    const events = await acme.readRunEvents(request.runId);
    expect(events.filter((event) => event.type === "FAILED")).toHaveLength(1);
    expect(events.at(-1)?.data).toMatchObject({ recovery: { status: "recovered" } });
    expect(events.map((event) => event.sequence)).toEqual(events.map((_event, index) => index + 1));
  }, 90_000);

  it("SIGSTOP mid-run: another worker takes the run over once the lease lapses and ends it once; continued, the stopped worker neither runs it again nor writes into its transcript", async () => {
    const { workspace, request, stopped, survivor, acme } = await stoppedMidSecondWrite();
    await eventually(
      "the run to complete on the other worker",
      async () => ((await acme.getRunRequest(request.runId))?.state === "COMPLETED" ? true : null),
      40_000,
    );
    const completed = await acme.getRun(request.runId);
    expect(completed?.owner?.pid).toBe(survivor.child.pid);
    const eventsWhenCompleted = await acme.readRunEvents(request.runId);
    const modelCallsWhenCompleted = workspace.model.requests.length;

    // Continued, the stopped worker reads the tool's answer of a run it no longer owns; then it is drained, so
    // whatever it would still do with that run is done by the time it exits.
    stopped.child.kill("SIGCONT");
    stopped.child.kill("SIGTERM");
    expect(await stopped.exited).toBe(0);

    // Ended once, by the survivor: no tool ran twice, the model was not asked again, nothing was appended.
    expect(executions(workspace, "/items/one")).toBe(1);
    expect(executions(workspace, "/items/two")).toBe(1);
    expect(workspace.model.requests).toHaveLength(modelCallsWhenCompleted);
    expect(await acme.readRunEvents(request.runId)).toEqual(eventsWhenCompleted);
    const after = await acme.getRun(request.runId);
    expect(after?.status).toBe("completed");
    expect(after?.owner?.pid).toBe(survivor.child.pid);
    expect(after?.headHash).toBe(completed?.headHash);
    // The transcript's hash chain holds: the continued worker wrote nothing into it.
    const verification = await verifyStoredRun(acme, request.runId);
    expect(verification.ok).toBe(true);
    expect(verification.head_hash).toBe(completed?.headHash);
  }, 90_000);

  it("SIGCONT while the run's new owner is mid-run: the continued worker writes nothing into the run and asks the model nothing; the new owner ends it, its chain intact", async () => {
    const finalTurnHeld = gate();
    const releaseFinalTurn = gate();
    const { workspace, request, stopped, survivor, acme } = await stoppedMidSecondWrite(async () => {
      finalTurnHeld.open();
      await releaseFinalTurn.opened;
    });
    // The other worker has taken the run over and waits on its final turn's model call.
    await finalTurnHeld.opened;
    expect((await acme.getRun(request.runId))?.owner?.pid).toBe(survivor.child.pid);
    const modelCallsBefore = workspace.model.requests.length;
    // Continued, the stopped worker gets the tool's answer for a run it no longer owns; drained, it has done
    // whatever it would do with it by the time it exits.
    stopped.child.kill("SIGCONT");
    stopped.child.kill("SIGTERM");
    expect(await stopped.exited).toBe(0);
    expect(workspace.model.requests).toHaveLength(modelCallsBefore);
    releaseFinalTurn.open();
    await eventually(
      "the new owner to complete the run",
      async () => ((await acme.getRunRequest(request.runId))?.state === "COMPLETED" ? true : null),
      40_000,
    );
    expect(executions(workspace, "/items/one")).toBe(1);
    expect(executions(workspace, "/items/two")).toBe(1);
    expect(workspace.model.requests).toHaveLength(modelCallsBefore);
    const run = await acme.getRun(request.runId);
    expect(run?.status).toBe("completed");
    expect(run?.owner?.pid).toBe(survivor.child.pid);
    const events = await acme.readRunEvents(request.runId);
    expect(events.filter((event) => event.type === "COMPLETED")).toHaveLength(1);
    expect(events.map((event) => event.sequence)).toEqual(events.map((_event, index) => index + 1));
    const verification = await verifyStoredRun(acme, request.runId);
    expect(verification.ok).toBe(true);
    expect(verification.head_hash).toBe(run?.headHash);
  }, 90_000);
});
