import { describe, expect, it } from "vitest";
import type { ExecutionContract } from "../../src/contract/execution-contract.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import type { ModelRequest } from "../../src/model/model-client.js";
import { guardToolCalls } from "../../src/runner/guard-tool-calls.js";
import { type AgentDefinition, prepareAgent } from "../../src/runner/prepare-agent.js";
import { replayRecordedRun } from "../../src/runner/replay-recorded-run.js";
import type { SessionCheckpoint } from "../../src/session/session-checkpoint.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { createStrictScriptedModel } from "../../src/testing/strict-scripted-model.js";
import { defineFunctionTool } from "../../src/tools/define-function-tool.js";
import {
  createInMemoryTranscriptWriter,
  type InMemoryTranscriptWriter,
} from "../../src/transcript/in-memory-transcript-writer.js";
import { call, report } from "./session-harness.js";

/** Tools with side effects recorded in `executions`; `hang` blocks until the test lets it go (a crash mid-call). */
function tools(executions: string[], blocked: { release?: () => void; started?: () => void }) {
  const block = (name: string) => async () => {
    executions.push(name);
    blocked.started?.();
    await new Promise<void>((resolve) => {
      blocked.release = resolve;
    });
    return "finished";
  };
  return [
    defineFunctionTool({
      name: "lookup",
      description: "Reads a value.",
      inputSchema: { type: "object", properties: { key: { type: "string" } } },
      annotations: { readOnlyHint: true },
      async execute(input) {
        executions.push(`lookup:${String(input.key)}`);
        return "value";
      },
    }),
    defineFunctionTool({
      name: "slow_read",
      description: "Reads slowly.",
      inputSchema: { type: "object" },
      annotations: { readOnlyHint: true },
      execute: block("slow_read"),
    }),
    defineFunctionTool({
      name: "slow_write",
      description: "Writes slowly.",
      inputSchema: { type: "object" },
      execute: block("slow_write"),
    }),
    defineFunctionTool({
      name: "delete_file",
      description: "Deletes a file.",
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
      annotations: { destructiveHint: true },
      async execute(input) {
        executions.push(`delete_file:${String(input.path)}`);
        return "deleted";
      },
    }),
  ];
}

function definition(
  respond: (request: ModelRequest, index: number) => ScriptedStep | Promise<ScriptedStep>,
  executions: string[],
  blocked: object,
): AgentDefinition {
  const environment = deterministicEnvironment();
  return {
    agent: { id: "durable", systemPrompt: "s", settings: { maxTurns: 6 } },
    targets: [{ provider: "scripted", model: "m", contextWindow: 100_000 }],
    models: [createStrictScriptedModel({ environment, respond })],
    tools: tools(executions, blocked),
    environment,
  };
}

/** Runs until the process "dies" (the returned promise is abandoned) and returns what was made durable. */
async function runUntilCrash(agentDefinition: AgentDefinition, crashed: Promise<void>) {
  const writer = createInMemoryTranscriptWriter();
  const checkpoints: SessionCheckpoint[] = [];
  const agent = prepareAgent(agentDefinition);
  void agent.run({
    prompt: "go",
    runId: "run_durable",
    transcriptWriter: writer,
    checkpoint: async (checkpoint) => {
      checkpoints.push(structuredClone(checkpoint));
    },
    wrapToolExecutor: (executor) => guardToolCalls(executor, { manifest: agent.contract.tool_manifest }),
  });
  await crashed;
  return { writer, checkpoint: checkpoints.at(-1)!, entriesAtCrash: writer.entries.length };
}

async function resume(
  agentDefinition: AgentDefinition,
  crashed: { writer: InMemoryTranscriptWriter; checkpoint: SessionCheckpoint; entriesAtCrash: number },
  guard: Parameters<typeof guardToolCalls>[1] extends infer Options ? Omit<Options, "manifest"> : never,
) {
  const agent = prepareAgent(agentDefinition);
  const writer = createInMemoryTranscriptWriter();
  const { result } = await agent.run({
    prompt: "go",
    runId: "run_durable",
    transcriptWriter: writer,
    resume: { checkpoint: crashed.checkpoint, transcriptCreatedAt: crashed.writer.header!.created_at },
    wrapToolExecutor: (executor) =>
      guardToolCalls(executor, { manifest: agent.contract.tool_manifest, ...guard }),
  });
  // The durable record: what was stored up to the checkpoint, then the resumed session.
  const entries = [...crashed.writer.entries.slice(0, crashed.checkpoint.entry_count), ...writer.entries];
  const raw = new Map([...crashed.writer.raw, ...writer.raw]);
  const replay = await replayRecordedRun({
    header: crashed.writer.header!,
    contract: crashed.writer.contract as ExecutionContract,
    entries,
    readRaw: async (hash) => JSON.parse(raw.get(hash) ?? "null"),
  });
  return { result, entries, replay };
}

// seed 003 INV-CP-001/002
describe("resume from a checkpoint", () => {
  it("after a crash mid-inference, resumes at the next step, never re-running committed tools", async () => {
    const executions: string[] = [];
    let crash: () => void = () => {};
    const crashed = new Promise<void>((resolve) => {
      crash = resolve;
    });
    const first = definition(
      (_request, index) => {
        if (index === 0) return { kind: "tool_calls", calls: [call("lookup", { key: "a" })] };
        crash(); // the process dies while waiting for the second answer
        return new Promise<ScriptedStep>(() => {});
      },
      executions,
      {},
    );
    const state = await runUntilCrash(first, crashed);
    expect(state.checkpoint).toMatchObject({ kind: "commit", turn: 2 });
    const second = definition(() => ({ kind: "tool_calls", calls: [report("resumed")] }), executions, {});
    const { result, entries, replay } = await resume(second, state, {});
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(result.finalReport?.content).toBe("resumed");
    expect(executions).toEqual(["lookup:a"]);
    expect(entries[state.checkpoint.entry_count]).toMatchObject({
      state: "PRECHECK",
      action: { resumed_from: { kind: "commit" } },
    });
    expect(replay).toMatchObject({
      ok: true,
      outcome: "COMPLETED_WITH_TOOLS",
      headHash: result.transcript.headHash,
    });
  });

  it("a non-idempotent tool in flight when the process died is not run again: its outcome is unknown", async () => {
    const executions: string[] = [];
    const blocked: { started?: () => void } = {};
    const crashed = new Promise<void>((resolve) => {
      blocked.started = resolve;
    });
    const first = definition(
      () => ({ kind: "tool_calls", calls: [call("slow_write", {})] }),
      executions,
      blocked,
    );
    const state = await runUntilCrash(first, crashed);
    expect(state.checkpoint.kind).toBe("before_execute");
    const inFlight = { turn: state.checkpoint.turn, call: state.checkpoint.state.callsToExecute[0]! };
    let toolReply = "";
    const second = definition(
      (request) => {
        toolReply = request.messages.at(-1)?.content ?? "";
        return { kind: "tool_calls", calls: [report("checked")] };
      },
      executions,
      {},
    );
    const { result, replay } = await resume(second, state, { possiblyInFlight: inFlight });
    expect(executions).toEqual(["slow_write"]);
    expect(toolReply.startsWith("(tool failed: outcome unknown")).toBe(true);
    expect(result.outcome).toBe("COMPLETED_CHAT_ONLY");
    expect(replay.ok).toBe(true);
  });

  it("a read-only tool in flight is simply run again", async () => {
    const executions: string[] = [];
    const blocked: { started?: () => void; release?: () => void } = {};
    const crashed = new Promise<void>((resolve) => {
      blocked.started = resolve;
    });
    const state = await runUntilCrash(
      definition(() => ({ kind: "tool_calls", calls: [call("slow_read", {})] }), executions, blocked),
      crashed,
    );
    const inFlight = { turn: state.checkpoint.turn, call: state.checkpoint.state.callsToExecute[0]! };
    const blockedAgain: { started?: () => void; release?: () => void } = {};
    blockedAgain.started = () => blockedAgain.release?.();
    const second = definition(
      () => ({ kind: "tool_calls", calls: [report("read twice")] }),
      executions,
      blockedAgain,
    );
    const resumed = resume(second, state, { possiblyInFlight: inFlight });
    await new Promise((resolve) => setImmediate(resolve));
    blockedAgain.release?.();
    const { result } = await resumed;
    expect(executions).toEqual(["slow_read", "slow_read"]);
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
  });
});

// seed 004
describe("approvals for destructive tools", () => {
  async function stopForApproval(executions: string[]) {
    const checkpoints: SessionCheckpoint[] = [];
    const writer = createInMemoryTranscriptWriter();
    const agent = prepareAgent(
      definition(
        () => ({ kind: "tool_calls", calls: [call("delete_file", { path: "/tmp/x" }, "call_delete")] }),
        executions,
        {},
      ),
    );
    const { result } = await agent.run({
      prompt: "go",
      runId: "run_durable",
      transcriptWriter: writer,
      checkpoint: async (checkpoint) => {
        checkpoints.push(structuredClone(checkpoint));
      },
      wrapToolExecutor: (executor) => guardToolCalls(executor, { manifest: agent.contract.tool_manifest }),
    });
    return { result, writer, checkpoint: checkpoints.at(-1)!, entriesAtCrash: writer.entries.length };
  }

  /** A decision for the call the stopped run waits on: its turn, id, tool and arguments. */
  function pending(stopped: { checkpoint: SessionCheckpoint }, decision: "approve" | "deny") {
    return { turn: stopped.checkpoint.turn, call: stopped.checkpoint.state.callsToExecute[0]!, decision };
  }

  it("stops the run INTERRUPTED with the pending call recorded; the tool does not run", async () => {
    const executions: string[] = [];
    const { result } = await stopForApproval(executions);
    expect(result.outcome).toBe("INTERRUPTED");
    expect(result.error?.code).toBe("APPROVAL_REQUIRED");
    expect(result.finalReport?.metadata).toMatchObject({
      reason: "approval_required",
      pending_approvals: ["call_delete"],
    });
    expect(executions).toEqual([]);
  });

  it("--approve runs the call once and the run completes; the record replays", async () => {
    const executions: string[] = [];
    const stopped = await stopForApproval(executions);
    const second = definition(() => ({ kind: "tool_calls", calls: [report("deleted it")] }), executions, {});
    const { result, replay } = await resume(second, stopped, { decisions: [pending(stopped, "approve")] });
    expect(executions).toEqual(["delete_file:/tmp/x"]);
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(replay.ok).toBe(true);
  });

  it("--deny tells the model the user refused, and the tool never runs", async () => {
    const executions: string[] = [];
    const stopped = await stopForApproval(executions);
    let toolReply = "";
    const second = definition(
      (request) => {
        toolReply = request.messages.at(-1)?.content ?? "";
        return { kind: "tool_calls", calls: [report("not deleted")] };
      },
      executions,
      {},
    );
    const { result } = await resume(second, stopped, { decisions: [pending(stopped, "deny")] });
    expect(executions).toEqual([]);
    expect(toolReply.startsWith("(tool failed: denied")).toBe(true);
    expect(result.success).toBe(true);
  });
});
