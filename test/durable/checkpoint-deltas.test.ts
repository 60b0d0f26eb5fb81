import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { wholeCheckpointInterval } from "../../src/runner/durable-run-hooks.js";
import { loadSessionCheckpoint } from "../../src/runner/load-session-checkpoint.js";
import { prepareAgent } from "../../src/runner/prepare-agent.js";
import type { SessionCheckpoint } from "../../src/session/session-checkpoint.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import type { RunStore } from "../../src/store/run-store.js";
import { createStrictScriptedModel } from "../../src/testing/strict-scripted-model.js";
import { defineFunctionTool } from "../../src/tools/define-function-tool.js";
import { observeTransactions, runDurably, testInvocation } from "./run-durably.js";

const invocation = testInvocation;

/** A run of `turns` turns: the model calls `echo` on every turn but the last, then answers. */
function prepareEchoAgent(turns: number) {
  const environment = deterministicEnvironment();
  const echo = defineFunctionTool({
    name: "echo",
    description: "Echoes its text.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    async execute(input) {
      return String(input.text);
    },
  });
  const model = createStrictScriptedModel({
    provider: "test",
    model: "scripted",
    respond: (request) => {
      const turn = request.messages.filter((message) => message.role === "tool").length + 1;
      return turn < turns
        ? {
            kind: "tool_calls",
            calls: [{ id: `call_${turn}`, name: "echo", arguments: { text: `hello ${turn}` } }],
          }
        : { kind: "text", text: "done" };
    },
  });
  const agent = prepareAgent({
    agent: { id: "deltas", systemPrompt: "Echo.", settings: { maxTurns: turns + 5, toolPolicy: "optional" } },
    targets: [{ provider: "test", model: "scripted", contextWindow: 1_000_000 }],
    models: [model],
    tools: [echo],
    environment,
  });
  return { agent, environment };
}

/** Runs the echo agent durably; returns every checkpoint the session handed over, in order. */
function runEchoDurably(store: RunStore, turns: number, runId: string) {
  return runDurably(prepareEchoAgent(turns).agent, store, runId, { agentId: "deltas" });
}

async function openStore() {
  const directory = await mkdtemp(join(tmpdir(), "charter-deltas-"));
  return openRunStore({ path: join(directory, "runs.db"), environment: deterministicEnvironment() });
}

describe("checkpoints stored as deltas (issue 4)", () => {
  it("stores what each checkpoint added, one in wholeCheckpointInterval whole, and reads every one back whole", async () => {
    const store = await openStore();
    try {
      const turns = 30;
      const { result, handed } = await runEchoDurably(store, turns, "run-deltas");
      expect(result.success).toBe(true);
      // Two per tool-calling turn: before the tool executes and at the COMMIT that continues.
      expect(handed).toHaveLength(2 * (turns - 1));
      const exported = await store.exportRun("run-deltas");
      const versions = exported.checkpoints.map((stored) => stored.checkpoint.v);
      expect(versions.filter((version) => version === 1)).toHaveLength(
        Math.ceil(handed.length / wholeCheckpointInterval),
      );
      expect(versions.filter((version) => version === 2)).toHaveLength(
        handed.length - Math.ceil(handed.length / wholeCheckpointInterval),
      );
      // A delta's size does not grow with the conversation: the last is about as big as the second.
      const sizes = exported.checkpoints.map((stored) => JSON.stringify(stored.checkpoint).length);
      const lastDelta = sizes[sizes.length - 1] as number;
      expect(lastDelta).toBeLessThan(1.5 * (sizes[1] as number));
      expect(sizes[wholeCheckpointInterval] as number).toBeGreaterThan(3 * lastDelta);

      // Each stored checkpoint reads back as exactly the state the session handed over.
      const roundTrip = (checkpoint: SessionCheckpoint) => JSON.parse(JSON.stringify(checkpoint));
      const latest = await loadSessionCheckpoint(store, "run-deltas");
      expect(latest).toEqual({ ...roundTrip(handed[handed.length - 1] as SessionCheckpoint), invocation });
      for (const [index, stored] of exported.checkpoints.entries()) {
        const upTo = {
          latestCheckpoint: async () => store.readCheckpoint("run-deltas", stored.seq),
          readCheckpoint: (runId: string, seq: number) => store.readCheckpoint(runId, seq),
        };
        expect(await loadSessionCheckpoint(upTo, "run-deltas")).toEqual({
          ...roundTrip(handed[index] as SessionCheckpoint),
          invocation,
        });
      }
    } finally {
      await store.close();
    }
  });

  it("stores every tool result, the last of a turn in the transaction of the checkpoint that follows", async () => {
    const store = await openStore();
    try {
      const { observed, transactions } = observeTransactions(store);
      const turns = 4;
      const { result } = await runEchoDurably(observed, turns, "run-results");
      expect(result.success).toBe(true);
      expect(transactions).toEqual([
        ...Array.from({ length: turns - 1 }, () => [
          { checkpoint: "before_execute", toolResults: 0 },
          { checkpoint: "commit", toolResults: 1 },
        ]).flat(),
      ]);
      const stored = await store.readToolResults("run-results");
      expect(stored.map((record) => record.callId)).toEqual(["call_1", "call_2", "call_3"]);
    } finally {
      await store.close();
    }
  });

  it("reads a stored run's delta checkpoints back whole (fixture corpus, never rewritten)", async () => {
    const fixture = JSON.parse(
      readFileSync(
        resolve(import.meta.dirname, "../fixtures/store/v1/completed-with-checkpoint-deltas.json"),
        "utf8",
      ),
    ) as { checkpoints: { seq: number; checkpoint: { v: number } }[] };
    const store = await openStore();
    try {
      const run = await store.importRun(fixture);
      expect(fixture.checkpoints.map((stored) => stored.checkpoint.v)).toEqual(
        fixture.checkpoints.map((_, index) => (index % wholeCheckpointInterval === 0 ? 1 : 2)),
      );
      const latest = await loadSessionCheckpoint(store, run.runId);
      const toolTurns = 17;
      expect(latest).toMatchObject({
        v: 1,
        kind: "commit",
        run_id: run.runId,
        // The COMMIT that continues after the last tool turn: the state is ready for the next turn's inference.
        turn: toolTurns + 1,
        entry_count: (fixture.checkpoints[fixture.checkpoints.length - 1]?.seq ?? 0) + 1,
        invocation: { agent_path: "catalogue.md" },
      });
      // System prompt, task, then an assistant call and its tool message per tool-calling turn.
      expect(latest?.state.conversation).toHaveLength(2 + 2 * toolTurns);
      expect(latest?.state.conversation[2 * toolTurns]).toMatchObject({
        role: "assistant",
        tool_calls: [{ id: `call_${toolTurns}`, name: "lookup", arguments: { sku: `KB-${toolTurns}` } }],
      });
      // A model call and a tool call per tool turn; the last turn's model call came after this checkpoint.
      expect(latest?.state.accounting).toEqual(
        (await store.readAccounting(run.runId)).slice(0, 2 * toolTurns),
      );
    } finally {
      await store.close();
    }
  });

  it("refuses a delta whose base does not precede it rather than following the links forever", async () => {
    const store = await openStore();
    try {
      await runEchoDurably(store, 3, "run-cyclic");
      const latest = await store.latestCheckpoint("run-cyclic");
      if (latest === null) throw new Error("the run stored no checkpoint");
      // A damaged row: the delta names itself as its base. Its base is read back... as itself, again and again.
      const cyclic = { ...latest, document: { ...latest.document, base_seq: latest.seq } };
      const reads: number[] = [];
      const damaged = {
        latestCheckpoint: async () => cyclic,
        readCheckpoint: async (_runId: string, seq: number) => {
          reads.push(seq);
          if (reads.length > 100) throw new Error("loadSessionCheckpoint follows a cycle of bases");
          return seq === cyclic.seq ? cyclic : store.readCheckpoint("run-cyclic", seq);
        },
      };
      await expect(loadSessionCheckpoint(damaged, "run-cyclic")).rejects.toMatchObject({
        code: "RUN_NOT_RESUMABLE",
        details: { reason: "checkpoint_delta_mismatch" },
      });
    } finally {
      await store.close();
    }
  });

  it("refuses to resume from a delta whose base is missing, naming the reason", async () => {
    const store = await openStore();
    try {
      await runEchoDurably(store, 3, "run-broken");
      const latest = await store.latestCheckpoint("run-broken");
      const broken = {
        latestCheckpoint: async () => latest,
        readCheckpoint: async () => null,
      };
      await expect(loadSessionCheckpoint(broken, "run-broken")).rejects.toMatchObject({
        code: "RUN_NOT_RESUMABLE",
        details: { reason: "checkpoint_base_missing" },
      });
    } finally {
      await store.close();
    }
  });
});
