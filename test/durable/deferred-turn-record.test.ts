import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { loadSessionCheckpoint } from "../../src/runner/load-session-checkpoint.js";
import { prepareAgent } from "../../src/runner/prepare-agent.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import type { RunStore } from "../../src/store/run-store.js";
import { verifyStoredRun } from "../../src/store/verify-stored-run.js";
import { createStrictScriptedModel } from "../../src/testing/strict-scripted-model.js";
import { defineFunctionTool } from "../../src/tools/define-function-tool.js";
import { observeTransactions, runDurably, testInvocation } from "./run-durably.js";

/**
 * A turn whose calls may all run again (read-only or idempotent) is not recorded before its calls start: its
 * `before_execute` checkpoint is written while a call waits, or else with the COMMIT checkpoint that follows, in
 * one transaction (src/runner/durable-run-hooks.ts). A turn with any other call is recorded before it starts.
 */
const inputSchema = { type: "object", properties: { key: { type: "string" } }, required: ["key"] } as const;

/** What the store held when a tool looked, by the tool's name. */
type Sighting = { readonly tool: string; readonly kind: string | null; readonly turn: number | null };

function prepareLookupAgent(store: RunStore, runId: string, sightings: Sighting[]) {
  async function sight(tool: string): Promise<void> {
    const latest = await store.latestCheckpoint(runId);
    const document = latest?.document as { kind?: string; turn?: number } | undefined;
    sightings.push({ tool, kind: document?.kind ?? null, turn: document?.turn ?? null });
  }
  const lookup = defineFunctionTool({
    name: "lookup",
    description: "Looks a key up in memory.",
    inputSchema,
    annotations: { readOnlyHint: true },
    async execute(input) {
      return `value of ${String(input.key)}`;
    },
  });
  const readPage = defineFunctionTool({
    name: "read_page",
    description: "Reads a page from disk.",
    inputSchema,
    annotations: { readOnlyHint: true },
    async execute(input) {
      // Real I/O: the call waits, and the run records its turn meanwhile.
      const page = await readFile(import.meta.filename, "utf8");
      await sight("read_page");
      return `${String(input.key)}: ${page.length} characters`;
    },
  });
  const writeNote = defineFunctionTool({
    name: "write_note",
    description: "Writes a note (no annotations: not known to be idempotent).",
    inputSchema,
    async execute(input) {
      await sight("write_note");
      return `noted ${String(input.key)}`;
    },
  });
  const script = [
    { kind: "tool_calls", calls: [{ id: "call_1", name: "lookup", arguments: { key: "a" } }] },
    { kind: "tool_calls", calls: [{ id: "call_2", name: "read_page", arguments: { key: "b" } }] },
    {
      kind: "tool_calls",
      calls: [
        { id: "call_3", name: "lookup", arguments: { key: "c" } },
        { id: "call_4", name: "write_note", arguments: { key: "d" } },
      ],
    },
    { kind: "text", text: "done" },
  ] as const;
  const model = createStrictScriptedModel({
    provider: "test",
    model: "scripted",
    respond: (request) => {
      const turn = request.messages.filter((message) => message.role === "assistant").length;
      return script[turn] as (typeof script)[number];
    },
  });
  return prepareAgent({
    agent: { id: "lookups", systemPrompt: "Look up.", settings: { maxTurns: 10, toolPolicy: "optional" } },
    targets: [{ provider: "test", model: "scripted", contextWindow: 1_000_000 }],
    models: [model],
    tools: [lookup, readPage, writeNote],
    environment: deterministicEnvironment(),
  });
}

describe("the record of a turn whose calls may run again (issue 4)", () => {
  it("is written while a call waits, or with the COMMIT that follows; other turns are recorded before their calls", async () => {
    const directory = await mkdtemp(join(tmpdir(), "charter-deferred-"));
    const store = await openRunStore({
      path: join(directory, "runs.db"),
      environment: deterministicEnvironment(),
    });
    try {
      const { observed, transactions } = observeTransactions(store);
      const runId = "run-deferred";
      const sightings: Sighting[] = [];
      const agent = prepareLookupAgent(store, runId, sightings);
      const { result, handed } = await runDurably(agent, observed, runId, {
        agentId: "lookups",
        classes: true,
      });
      expect(result).toMatchObject({ success: true, turns: 4 });
      expect(handed.map((checkpoint) => checkpoint.kind)).toEqual([
        "before_execute",
        "commit",
        "before_execute",
        "commit",
        "before_execute",
        "commit",
      ]);
      expect(transactions).toEqual([
        // Turn 1: `lookup` answered at once; the turn is stored with its COMMIT, one transaction.
        { checkpoint: "commit", toolResults: 1 },
        // Turn 2: `read_page` waited on the disk: the turn was recorded meanwhile.
        { checkpoint: "before_execute", toolResults: 0 },
        { checkpoint: "commit", toolResults: 1 },
        // Turn 3: `write_note` may not run twice: the turn is recorded before its first call, and the read-only
        // call's result before `write_note` starts.
        { checkpoint: "before_execute", toolResults: 0 },
        { checkpoint: null, toolResults: 1 },
        { checkpoint: "commit", toolResults: 1 },
      ]);
      expect(sightings).toEqual([
        { tool: "read_page", kind: "before_execute", turn: 2 },
        { tool: "write_note", kind: "before_execute", turn: 3 },
      ]);
      // Nothing is lost by the checkpoints not written: the run verifies, and resumes from its last checkpoint.
      const report = await verifyStoredRun(store, runId);
      expect(report).toMatchObject({ ok: true, head_hash: result.transcript.headHash });
      expect((await store.readToolResults(runId)).map((stored) => stored.callId)).toEqual([
        "call_1",
        "call_2",
        "call_3",
        "call_4",
      ]);
      const latest = await loadSessionCheckpoint(store, runId);
      expect(latest).toEqual({ ...JSON.parse(JSON.stringify(handed[5])), invocation: testInvocation });
    } finally {
      await store.close();
    }
  });
});
