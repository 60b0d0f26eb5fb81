import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { charterProcess, cli } from "../cli/cli-harness.js";
import {
  closeDurableHarness,
  durableWorkspace,
  expectIntactRun,
  fileSatisfies,
  holdStoreWriteLock,
  holdsEntry,
  killChild,
  onlyRunId,
  records,
  runArguments,
  runDirectoryTranscript,
  signal,
  startCharter,
  storedChain,
  storeHoldsEntry,
} from "./durable-harness.js";

/**
 * More kill -9 points than kill-and-resume.test.ts covers (issue 4): after a tool's EXECUTE and before the
 * checkpoint that stores its result, in the middle of a tool configured idempotent, and a resumed process killed
 * again. Each resumed run must complete with the expected outcome, verify and replay, keep every committed entry,
 * and run no non-idempotent tool twice.
 */
afterEach(closeDurableHarness);

/** An unannotated MCP tool with a side effect, whose answer is held back until `<record file>.release` exists. */
const heldTool = (key: string): ScriptedStep => ({
  kind: "tool_calls",
  calls: [{ name: "test__record_until_released", arguments: { key } }],
});
/** An unannotated MCP tool with a side effect that answers at once. */
const record = (key: string): ScriptedStep => ({
  kind: "tool_calls",
  calls: [{ name: "test__record", arguments: { key, value: key } }],
});
const finalReport = (content: string): ScriptedStep => ({
  kind: "tool_calls",
  calls: [{ name: "final_report", arguments: { format: "markdown", content } }],
});

/** Resumes in process; returns the result and checks the run is intact against the chain stored at the kill. */
async function resumeAndCheck(store: string, runId: string, committed: readonly string[]) {
  const resumed = await cli(["resume", runId, "--json", "--store", store]);
  const result = JSON.parse(resumed.stdout) as AIAgentResult;
  expect(result.runId).toBe(runId);
  await expectIntactRun(store, runId, committed);
  const shown = JSON.parse((await cli(["runs", "show", runId, "--json", "--store", store])).stdout);
  expect(shown).toMatchObject({ outcome: result.outcome, chainHead: result.transcript.headHash });
  return result;
}

describe("kill -9 between a tool's end and the checkpoint that stores its result", () => {
  // The durable hooks leave this window open on purpose (one transaction per turn saved): the call must then be
  // handled exactly as one killed mid-execution, by its idempotency class.
  const cases = [
    {
      name: "an unannotated tool is not run again: the model is told its outcome is unknown",
      frontmatter: "",
      executions: 1,
      outcome: "COMPLETED_CHAT_ONLY",
    },
    {
      name: "a tool configured idempotent (idempotentTools) is run again, once",
      frontmatter: "\nidempotentTools: [test__record_until_released]",
      executions: 2,
      outcome: "COMPLETED_WITH_TOOLS",
    },
  ];
  for (const point of cases) {
    it(point.name, async () => {
      const { directory, recordFile, store } = await durableWorkspace(
        [heldTool("ended"), finalReport("checked")],
        { frontmatter: point.frontmatter },
      );
      const run = startCharter(runArguments(directory, store), directory);
      // The side effect is done and the tool holds its answer; the run's before-execute checkpoint (after VALIDATE_CALLS) is stored (for
      // the idempotent tool, while the call waits rather than before it starts).
      await fileSatisfies(recordFile, (text) => text.includes("ended"));
      await storeHoldsEntry(store, "VALIDATE_CALLS", 1);
      const release = holdStoreWriteLock(store);
      try {
        const transcript = await runDirectoryTranscript(join(directory, "runs"));
        await writeFile(`${recordFile}.release`, "");
        // The run directory shows the tool's result observed; the store cannot take the turn's checkpoint.
        await fileSatisfies(transcript, (text) => holdsEntry(text, "OBSERVE", 1));
        await killChild(run);
      } finally {
        release();
      }
      const runId = await onlyRunId(store);
      const committed = await storedChain(store, runId);

      const result = await resumeAndCheck(store, runId, committed);
      expect(result).toMatchObject({ outcome: point.outcome, finalReport: { content: "checked" } });
      const reply = result.conversation.find((message) => message.role === "tool")?.content ?? "";
      expect(reply.startsWith("(tool failed: outcome unknown")).toBe(point.executions === 1);
      expect(await records(recordFile)).toHaveLength(point.executions);
    });
  }
});

describe("kill -9 in the middle of a tool configured idempotent", () => {
  it("an unannotated MCP tool listed in idempotentTools is re-run exactly once more on resume", async () => {
    const { directory, recordFile, store } = await durableWorkspace(
      [heldTool("in-flight"), finalReport("recorded")],
      { frontmatter: "\nidempotentTools: [test__record_until_released]" },
    );
    const run = startCharter(runArguments(directory, store), directory);
    await fileSatisfies(recordFile, (text) => text.includes("in-flight"));
    // An idempotent call runs before its turn is recorded, which happens while it waits: killed after that.
    await storeHoldsEntry(store, "VALIDATE_CALLS", 1);
    await killChild(run);
    // Released before the resume: the re-run answers at once.
    await writeFile(`${recordFile}.release`, "");
    const runId = await onlyRunId(store);
    const committed = await storedChain(store, runId);

    const result = await resumeAndCheck(store, runId, committed);
    expect(result).toMatchObject({ outcome: "COMPLETED_WITH_TOOLS", finalReport: { content: "recorded" } });
    expect(result.conversation.find((message) => message.role === "tool")?.content).toBe(
      "recorded in-flight",
    );
    expect((await records(recordFile)).map((record) => record.key)).toEqual(["in-flight", "in-flight"]);
  });
});

describe("kill -9 twice within one turn's tool calls", () => {
  it("a call answered 'outcome unknown' on the first resume is not taken for the call in flight on the second", async () => {
    const { directory, recordFile, store } = await durableWorkspace([
      {
        kind: "tool_calls",
        calls: [
          { name: "test__record_until_released", arguments: { key: "first" } },
          { name: "test__record_until_released", arguments: { key: "second" } },
        ],
      },
      finalReport("both attempted"),
    ]);
    const run = startCharter(runArguments(directory, store), directory);
    await fileSatisfies(recordFile, (text) => text.includes('"first"'));
    await killChild(run);
    const runId = await onlyRunId(store);

    // The first resume answers `first` without running it (it may have run) and starts `second`: killed there.
    const resumedRun = startCharter(["resume", runId, "--json", "--store", store], directory);
    await fileSatisfies(recordFile, (text) => text.includes('"second"'));
    await killChild(resumedRun);
    await writeFile(`${recordFile}.release`, "");
    const committed = await storedChain(store, runId);

    const result = await resumeAndCheck(store, runId, committed);
    // Both answers are "outcome unknown" (neither call is known to have run), so no tool counts as executed.
    expect(result).toMatchObject({
      outcome: "COMPLETED_CHAT_ONLY",
      finalReport: { content: "both attempted" },
    });
    // Neither call ran twice: `second`, in flight at the second kill, is answered as unknown too.
    expect((await records(recordFile)).map((record) => record.key)).toEqual(["first", "second"]);
    const toolMessages = result.conversation.filter(
      (message) => message.role === "tool" && message.tool_name === "test__record_until_released",
    );
    expect(
      toolMessages.map((message) => message.content.startsWith("(tool failed: outcome unknown")),
    ).toEqual([true, true]);
  });
});

describe("kill -9 of a resumed process", () => {
  it("killed again while resumed, a second resume completes: every side effect once, the chain kept", async () => {
    const killFirst = signal();
    const killSecond = signal();
    const { directory, recordFile, store } = await durableWorkspace(
      [record("one"), record("two"), finalReport("two records")],
      {
        onRequest: (index) => {
          // The run's second model call: turn 1 committed. The resumed run asks for turn 2 again (index 2),
          // commits it, and is killed at its next model call.
          if (index === 1) killFirst.reach();
          if (index === 3) killSecond.reach();
        },
      },
    );
    const run = startCharter(runArguments(directory, store), directory);
    await killFirst.reached;
    await killChild(run);
    const runId = await onlyRunId(store);
    const firstChain = await storedChain(store, runId);

    const resumedRun = startCharter(["resume", runId, "--json", "--store", store], directory);
    await killSecond.reached;
    await killChild(resumedRun);
    expect(await onlyRunId(store)).toBe(runId);
    const secondChain = await storedChain(store, runId);
    expect(secondChain.slice(0, firstChain.length)).toEqual(firstChain);
    expect(secondChain.length).toBeGreaterThan(firstChain.length);

    const result = await resumeAndCheck(store, runId, secondChain);
    expect(result).toMatchObject({
      outcome: "COMPLETED_WITH_TOOLS",
      finalReport: { content: "two records" },
    });
    expect((await records(recordFile)).map((entry) => entry.key)).toEqual(["one", "two"]);
  });
});

describe("two resumes of one crashed run at once", () => {
  it("one completes the run; the other stops with RUN_CONFLICT, storing nothing and running no call twice", async () => {
    const killed = signal();
    const bothAsking = signal();
    let resumesAsking = 0;
    const { directory, recordFile, store } = await durableWorkspace(
      [record("one"), record("two"), finalReport("two records")],
      {
        onRequest: (index) => {
          // The run's second model call: turn 1 committed, killed there.
          if (index === 1) killed.reach();
          // The two resumes' first model calls: each answered only once both have asked, so that both sessions
          // run at once (both reopened the run already) and race for the turn.
          if (index === 2 || index === 3) {
            resumesAsking++;
            if (resumesAsking === 2) bothAsking.reach();
            return bothAsking.reached;
          }
        },
      },
    );
    const run = startCharter(runArguments(directory, store), directory);
    await killed.reached;
    await killChild(run);
    const runId = await onlyRunId(store);
    const committed = await storedChain(store, runId);

    const resume = () => charterProcess(["resume", runId, "--json", "--store", store], { cwd: directory });
    const [first, second] = await Promise.all([resume(), resume()]);
    const outcomes = [first, second].sort((a, b) => (a.exitCode ?? -1) - (b.exitCode ?? -1));
    const [winner, loser] = outcomes as [typeof first, typeof first];
    expect([winner.exitCode, loser.exitCode]).toEqual([0, 1]);
    expect(JSON.parse(winner.stdout)).toMatchObject({
      runId,
      outcome: "COMPLETED_WITH_TOOLS",
      finalReport: { content: "two records" },
    });
    expect(JSON.parse(loser.stdout)).toMatchObject({
      runId,
      success: false,
      error: { code: "RUN_CONFLICT" },
    });
    // The turn's call is not idempotent: it is recorded before it runs, so only the resume whose record was
    // stored ran it.
    expect((await records(recordFile)).map((entry) => entry.key)).toEqual(["one", "two"]);
    await expectIntactRun(store, runId, committed);
    const shown = JSON.parse((await cli(["runs", "show", runId, "--json", "--store", store])).stdout);
    expect(shown).toMatchObject({
      status: "completed",
      chainHead: JSON.parse(winner.stdout).transcript.headHash,
    });
  });
});
