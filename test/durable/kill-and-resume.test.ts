import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemEnvironment } from "../../src/foundation/environment.js";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { cli } from "../cli/cli-harness.js";
import {
  closeDurableHarness,
  durableWorkspace,
  fileSatisfies,
  killChild,
  onlyRunId,
  records,
  runArguments,
  signal,
  startCharter,
} from "./durable-harness.js";

/**
 * Durable runs for real: `charter run` as a child process against the scripted model and the real MCP test
 * server, killed with SIGKILL at different points, then `charter resume`. Asserts: the expected outcome, a
 * transcript that verifies and replays, no committed step lost, and no non-idempotent tool run twice.
 * kill-points.test.ts adds the points between a tool's end and its checkpoint, and a resumed process killed again.
 */
afterEach(closeDurableHarness);

describe("kill -9 and resume", () => {
  it("killed during an inference after committed tool calls: resumes at the next step, no side effect repeated", async () => {
    const kill = signal();
    const { directory, recordFile, store } = await durableWorkspace(
      [
        { kind: "tool_calls", calls: [{ name: "test__record", arguments: { key: "first", value: "1" } }] },
        { kind: "tool_calls", calls: [{ name: "test__record", arguments: { key: "second", value: "2" } }] },
        {
          kind: "tool_calls",
          calls: [{ name: "final_report", arguments: { format: "markdown", content: "recorded both" } }],
        },
      ],
      {
        onRequest: (index) => {
          if (index === 2) kill.reach(); // the third model call: two turns are committed
        },
      },
    );
    const run = startCharter(runArguments(directory, store), directory);
    await kill.reached;
    await killChild(run);
    const runId = await onlyRunId(store);

    const resumed = await cli(["resume", runId, "--json", "--store", store]);
    const result = JSON.parse(resumed.stdout) as AIAgentResult;
    expect(resumed.exitCode).toBe(0);
    expect(result).toMatchObject({
      outcome: "COMPLETED_WITH_TOOLS",
      runId,
      finalReport: { content: "recorded both" },
    });
    expect((await records(recordFile)).map((record) => record.key)).toEqual(["first", "second"]);
    const verified = await cli(["verify", runId, "--json", "--store", store]);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true });
    const replayed = await cli(["replay", runId, "--json", "--store", store]);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ ok: true, outcome: "COMPLETED_WITH_TOOLS" });
    const shown = JSON.parse((await cli(["runs", "show", runId, "--json", "--store", store])).stdout);
    expect(shown).toMatchObject({
      status: "completed",
      outcome: "COMPLETED_WITH_TOOLS",
      chainHead: result.transcript.headHash,
    });
    // The store's accounting is the run's, each entry once: what the resumed run restored is not stored again.
    const opened = await openRunStore({ path: store, environment: systemEnvironment });
    try {
      expect(await opened.readAccounting(runId)).toEqual(JSON.parse(JSON.stringify(result.accounting)));
    } finally {
      await opened.close();
    }
  }, 60_000); // six charter processes one after another (run, resume, verify, replay, runs show): slow on a busy machine

  it("killed while a non-idempotent tool runs: the tool is not run again, the model is told its outcome is unknown", async () => {
    const { directory, recordFile, store } = await durableWorkspace([
      {
        kind: "tool_calls",
        calls: [{ name: "test__record_slowly", arguments: { key: "in-flight", ms: 600_000 } }],
      },
      {
        kind: "tool_calls",
        calls: [
          { name: "final_report", arguments: { format: "markdown", content: "checked the side effect" } },
        ],
      },
    ]);
    const started = fileSatisfies(recordFile, (text) => text.includes("in-flight"));
    const run = startCharter(runArguments(directory, store), directory);
    await started;
    await killChild(run);
    const runId = await onlyRunId(store);

    const resumed = await cli(["resume", runId, "--json", "--store", store]);
    const result = JSON.parse(resumed.stdout) as AIAgentResult;
    expect(result.outcome).toBe("COMPLETED_CHAT_ONLY");
    const toolReply = result.conversation.find((message) => message.role === "tool");
    expect(toolReply?.content.startsWith("(tool failed: outcome unknown")).toBe(true);
    expect((await records(recordFile)).filter((record) => record.key === "in-flight")).toHaveLength(1);
    expect(JSON.parse((await cli(["replay", runId, "--json", "--store", store])).stdout)).toMatchObject({
      ok: true,
    });
  });
});

describe("approvals through the CLI", () => {
  it("stops for a destructive call, then `resume --approve` runs it exactly once", async () => {
    const { directory, recordFile, store } = await durableWorkspace([
      {
        kind: "tool_calls",
        calls: [{ id: "call_erase", name: "test__record", arguments: { key: "erase", value: "all" } }],
      },
      {
        kind: "tool_calls",
        calls: [{ name: "final_report", arguments: { format: "markdown", content: "erased" } }],
      },
    ]);
    await writeFile(
      join(directory, "agent.md"),
      "---\nmodels: [local/m]\ntools: [test]\ndestructiveTools: [test__record]\n---\nErase when asked.\n",
    );
    const first = await cli(runArguments(directory, store, "Erase."));
    expect(first.exitCode).toBe(1);
    const stopped = JSON.parse(first.stdout) as AIAgentResult;
    expect(stopped).toMatchObject({ outcome: "INTERRUPTED", error: { code: "APPROVAL_REQUIRED" } });
    expect(stopped.finalReport?.metadata).toMatchObject({ pending_approvals: ["call_erase"] });
    expect(await records(recordFile)).toEqual([]);
    expect(
      JSON.parse((await cli(["runs", "show", stopped.runId, "--json", "--store", store])).stdout),
    ).toMatchObject({
      status: "awaiting_approval",
    });

    const resumed = await cli([
      "resume",
      stopped.runId,
      "--approve",
      "call_erase",
      "--json",
      "--store",
      store,
    ]);
    expect(resumed.exitCode).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      outcome: "COMPLETED_WITH_TOOLS",
      finalReport: { content: "erased" },
    });
    expect((await records(recordFile)).map((record) => record.key)).toEqual(["erase"]);
    const replay = await cli(["replay", stopped.runId, "--json", "--store", store]);
    expect(JSON.parse(replay.stdout)).toMatchObject({ ok: true });
  });
});

describe("replay --live-tools", () => {
  it("re-executes only the read-only and idempotent calls that ran; a non-idempotent call keeps its recorded result", async () => {
    const { directory, recordFile, store } = await durableWorkspace([
      {
        kind: "tool_calls",
        calls: [{ id: "call_echo", name: "test__echo", arguments: { text: "same answer" } }],
      },
      {
        kind: "tool_calls",
        calls: [{ id: "call_record", name: "test__record", arguments: { key: "once", value: "1" } }],
      },
      {
        kind: "tool_calls",
        calls: [{ name: "final_report", arguments: { format: "markdown", content: "done" } }],
      },
    ]);
    const first = await cli(runArguments(directory, store));
    const result = JSON.parse(first.stdout) as AIAgentResult;
    expect(result.success).toBe(true);
    const replayed = await cli(["replay", result.runId, "--live-tools", "--json", "--store", store]);
    expect(replayed.exitCode).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({
      ok: true,
      toolDivergences: [],
      reExecuted: ["call_echo"],
      notReExecuted: [{ callId: "call_record", tool: "test__record", turn: 2, reason: "not_idempotent" }],
    });
    // The side effect happened once, in the run: the replay did not repeat it.
    expect((await records(recordFile)).map((record) => record.key)).toEqual(["once"]);

    // A run directory records no invocation to start the tools from: refused, rather than replayed offline
    // under a live-tools report.
    const fromDirectory = await cli([
      "replay",
      join(directory, "runs", result.runId),
      "--live-tools",
      "--json",
    ]);
    expect(fromDirectory.exitCode).toBe(4);
    expect(fromDirectory.stdout).toBe("");
  });

  it("does not re-execute a call whose tool name no longer leads to the tool the record ran", async () => {
    const { directory, store } = await durableWorkspace([
      {
        kind: "tool_calls",
        calls: [{ id: "call_echo", name: "test__echo", arguments: { text: "same answer" } }],
      },
      {
        kind: "tool_calls",
        calls: [{ name: "final_report", arguments: { format: "markdown", content: "done" } }],
      },
    ]);
    const result = JSON.parse((await cli(runArguments(directory, store))).stdout) as AIAgentResult;
    expect(result.success).toBe(true);
    // The agent file the run was invoked with no longer uses the server: `test__echo` leads nowhere now.
    await writeFile(join(directory, "agent.md"), "---\nmodels: [local/m]\ntools: []\n---\nEcho.\n");
    const replayed = await cli(["replay", result.runId, "--live-tools", "--json", "--store", store]);
    expect(JSON.parse(replayed.stdout)).toMatchObject({
      ok: true,
      reExecuted: [],
      notReExecuted: [{ callId: "call_echo", tool: "test__echo", turn: 1, reason: "source_changed" }],
    });
  });

  it("never re-executes a destructive call the user denied", async () => {
    const { directory, recordFile, store } = await durableWorkspace([
      {
        kind: "tool_calls",
        calls: [{ id: "call_erase", name: "test__record", arguments: { key: "erase", value: "all" } }],
      },
      {
        kind: "tool_calls",
        calls: [{ name: "final_report", arguments: { format: "markdown", content: "not erased" } }],
      },
    ]);
    await writeFile(
      join(directory, "agent.md"),
      "---\nmodels: [local/m]\ntools: [test]\ndestructiveTools: [test__record]\n---\nErase when asked.\n",
    );
    const stopped = JSON.parse((await cli(runArguments(directory, store, "Erase."))).stdout) as AIAgentResult;
    expect(stopped.error?.code).toBe("APPROVAL_REQUIRED");
    const resumed = await cli(["resume", stopped.runId, "--deny", "call_erase", "--json", "--store", store]);
    expect(resumed.exitCode).toBe(0);
    expect(await records(recordFile)).toEqual([]);

    const replayed = await cli(["replay", stopped.runId, "--live-tools", "--json", "--store", store]);
    expect(JSON.parse(replayed.stdout)).toMatchObject({
      ok: true,
      reExecuted: [],
      notReExecuted: [{ callId: "call_erase", tool: "test__record", reason: "denied" }],
    });
    expect(await records(recordFile)).toEqual([]);
  });

  it("reports every call whose live result differs, and still replays the whole run to its chain head", async () => {
    const { directory, recordFile, store } = await durableWorkspace([
      { kind: "tool_calls", calls: [{ id: "call_count_1", name: "test__count_records", arguments: {} }] },
      {
        kind: "tool_calls",
        calls: [{ id: "call_record", name: "test__record", arguments: { key: "one", value: "1" } }],
      },
      { kind: "tool_calls", calls: [{ id: "call_count_2", name: "test__count_records", arguments: {} }] },
      {
        kind: "tool_calls",
        calls: [{ name: "final_report", arguments: { format: "markdown", content: "counted" } }],
      },
    ]);
    const result = JSON.parse((await cli(runArguments(directory, store))).stdout) as AIAgentResult;
    expect(result.success).toBe(true);
    // The world moves on after the run: two more records, so both counts answer differently now.
    await writeFile(recordFile, `${await readFile(recordFile, "utf8")}{"key":"later"}\n{"key":"later"}\n`);

    const replayed = await cli(["replay", result.runId, "--live-tools", "--json", "--store", store]);
    expect(replayed.exitCode).toBe(1);
    const report = JSON.parse(replayed.stdout);
    expect(report).toMatchObject({
      ok: true,
      divergence: null,
      headHash: result.transcript.headHash,
      recordedHeadHash: result.transcript.headHash,
      reExecuted: ["call_count_1", "call_count_2"],
      notReExecuted: [{ callId: "call_record", reason: "not_idempotent" }],
    });
    expect(report.toolDivergences).toMatchObject([
      {
        callId: "call_count_1",
        tool: "test__count_records",
        turn: 1,
        recorded: { status: "ok", preview: "0 records" },
        live: { status: "ok", preview: "3 records" },
      },
      {
        callId: "call_count_2",
        tool: "test__count_records",
        turn: 3,
        recorded: { status: "ok", preview: "1 records" },
        live: { status: "ok", preview: "3 records" },
      },
    ]);
    const human = await cli(["replay", result.runId, "--live-tools", "--store", store]);
    expect(human.stdout).toContain("TOOL DIVERGED: call_count_1 (test__count_records, turn 1)");
    expect(human.stdout).toContain("TOOL DIVERGED: call_count_2 (test__count_records, turn 3)");
    expect(human.stdout).toContain("not re-executed: call_record (test__record, turn 2)");
  });
});

describe("kill -9 at other points", () => {
  const steps: ScriptedStep[] = [
    { kind: "tool_calls", calls: [{ name: "test__record", arguments: { key: "one", value: "1" } }] },
    { kind: "tool_calls", calls: [{ name: "test__record", arguments: { key: "two", value: "2" } }] },
    {
      kind: "tool_calls",
      calls: [{ name: "final_report", arguments: { format: "markdown", content: "two records" } }],
    },
  ];

  for (const killAtRequest of [1, 2]) {
    it(`killed at model call ${killAtRequest + 1}: resume completes with each side effect exactly once`, async () => {
      const kill = signal();
      const { directory, recordFile, store } = await durableWorkspace(steps, {
        onRequest: (index) => {
          if (index === killAtRequest) kill.reach();
        },
      });
      const run = startCharter(runArguments(directory, store), directory);
      await kill.reached;
      await killChild(run);
      const runId = await onlyRunId(store);
      const resumed = await cli(["resume", runId, "--json", "--store", store]);
      expect(JSON.parse(resumed.stdout)).toMatchObject({
        outcome: "COMPLETED_WITH_TOOLS",
        finalReport: { content: "two records" },
      });
      expect((await records(recordFile)).map((record) => record.key)).toEqual(["one", "two"]);
      expect(JSON.parse((await cli(["verify", runId, "--json", "--store", store])).stdout)).toMatchObject({
        ok: true,
      });
      expect(JSON.parse((await cli(["replay", runId, "--json", "--store", store])).stdout)).toMatchObject({
        ok: true,
      });
    });
  }

  it("killed before its first checkpoint: resume refuses with RUN_NOT_RESUMABLE, nothing half-done", async () => {
    const kill = signal();
    const { directory, recordFile, store } = await durableWorkspace(steps, {
      onRequest: (index) => index === 0 && kill.reach(),
    });
    const run = startCharter(runArguments(directory, store), directory);
    await kill.reached;
    await killChild(run);
    const runId = await onlyRunId(store);
    const resumed = await cli(["resume", runId, "--store", store]);
    expect(resumed.exitCode).toBe(1);
    expect(resumed.stderr).toContain("RUN_NOT_RESUMABLE");
    expect(await records(recordFile)).toEqual([]);
  });
});
