import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { systemEnvironment } from "../../src/foundation/environment.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import type { RecordedRequest } from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { resumeWorkflow } from "../../src/workflow/resume-workflow.js";
import { type RunWorkflowOptions, runWorkflow } from "../../src/workflow/run-workflow.js";
import { verifyWorkflowRun } from "../../src/workflow/verify-workflow-run.js";
import { parseWorkflowCheckpoint } from "../../src/workflow/workflow-checkpoint.js";
import { postgresTestUrl } from "../store/postgres-store-factory.js";
import {
  answer,
  closeWorkflowServers,
  fileHolds,
  recordedKeys,
  storedWorkflowEntries,
  storeHoldsStep,
  taskOf,
  toolResultsOf,
  type WorkflowWorkspace,
  workflowWorkspace,
} from "./workflow-harness.js";

afterEach(closeWorkflowServers);

function options(workspace: WorkflowWorkspace, extra: Partial<RunWorkflowOptions> = {}): RunWorkflowOptions {
  return {
    workflowPath: workspace.workflowPath,
    cwd: workspace.directory,
    store: workspace.store,
    runsDirectory: join(workspace.directory, "runs"),
    ...extra,
  };
}

async function withStore<T>(
  path: string,
  use: (store: Awaited<ReturnType<typeof openRunStore>>) => Promise<T>,
) {
  const store = await openRunStore({ path, environment: systemEnvironment });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** The workflow transcript's step entries in chain order (`WORKFLOW_STEP_START step/a/start`...). */
async function stepEntries(path: string, runId: string): Promise<string[]> {
  return withStore(path, async (store) => {
    const states: string[] = [];
    for await (const entry of store.readEntries(runId)) {
      if (entry.state.startsWith("WORKFLOW_STEP") || entry.state.startsWith("WORKFLOW_COMPENSATION"))
        states.push(`${entry.state} ${entry.step_id}`);
    }
    return states;
  });
}

/** A model answer that fails the run at once: the endpoint refuses the credentials. */
const refused: ScriptedStep = { kind: "error", status: 401 };

function callTool(name: string, args: Record<string, unknown>): ScriptedStep {
  return { kind: "tool_calls", calls: [{ name, arguments: args }] };
}

describe("workflows in process", () => {
  it("INV-AGT-003 steps execute in order", async () => {
    const workspace = await workflowWorkspace({
      agents: { first: "", second: "", third: "" },
      workflow: [
        "id: ordered",
        "input: { type: object, required: [topic], properties: { topic: { type: string } } }",
        "steps:",
        "  - { id: one, agent: first.md, prompt: 'Start on {{input.topic}}', saveAs: start }",
        "  - { id: two, agent: second.md, prompt: 'Continue from {{steps.one.report}}', dependsOn: [one] }",
        "  - { id: three, agent: third.md, prompt: 'Finish {{memory.start}} and {{steps.two.report}}', dependsOn: [two] }",
        "  - { id: four, agent: first.md, prompt: 'Independent, but after three in the array' }",
        "output: '{{steps.three.report}}'",
        "",
      ].join("\n"),
      respond: (request, agent) => answer(`${agent} done (${taskOf(request).split(" ")[0]})`),
    });
    const result = await runWorkflow(options(workspace, { input: { topic: "tides" } }));
    expect(result).toMatchObject({ status: "completed", output: "third done (Finish)", errors: [] });
    expect(result.steps.map((step) => [step.id, step.status, step.report])).toEqual([
      ["one", "completed", "first done (Start)"],
      ["two", "completed", "second done (Continue)"],
      ["three", "completed", "third done (Finish)"],
      ["four", "completed", "first done (Independent,)"],
    ]);
    // The model was asked in array order, each step with what the one before produced; step four, which depends on
    // nothing, still waited for its turn.
    const asked = workspace.server.requests.filter((request) => request.wire !== null).map(taskOf);
    expect(asked).toEqual([
      "Start on tides",
      "Continue from first done (Start)",
      "Finish first done (Start) and second done (Continue)",
      "Independent, but after three in the array",
    ]);
    expect(await stepEntries(workspace.store, result.workflowRunId)).toEqual([
      "WORKFLOW_STEP_START step/one/start",
      "WORKFLOW_STEP_END step/one/end",
      "WORKFLOW_STEP_START step/two/start",
      "WORKFLOW_STEP_END step/two/end",
      "WORKFLOW_STEP_START step/three/start",
      "WORKFLOW_STEP_END step/three/end",
      "WORKFLOW_STEP_START step/four/start",
      "WORKFLOW_STEP_END step/four/end",
    ]);
    await withStore(workspace.store, async (store) => {
      expect(await store.getRun(result.workflowRunId)).toMatchObject({
        kind: "workflow",
        status: "completed",
        outcome: "completed",
        agentId: "ordered",
        headHash: result.headHash,
      });
      for (const step of result.steps) {
        expect(await store.getRun(step.runId as string)).toMatchObject({
          kind: "agent",
          parentRunId: result.workflowRunId,
          status: "completed",
        });
      }
      const verified = await verifyWorkflowRun(store, result.workflowRunId);
      expect(verified).toMatchObject({ ok: true, head_hash: result.headHash });
      expect(verified.children.map((child) => [child.stepId, child.ok])).toEqual([
        ["one", true],
        ["two", true],
        ["three", true],
        ["four", true],
      ]);
    });
  });

  it("INV-CP-001 checkpoint contains all required data", async () => {
    const workspace = await workflowWorkspace({
      agents: { first: "", second: "" },
      workflow: [
        "id: checkpointed",
        "steps:",
        "  - { id: one, agent: first.md, prompt: 'Start {{input.topic}}', saveAs: notes }",
        "  - { id: two, agent: second.md, prompt: 'Use {{memory.notes}}', dependsOn: [one] }",
        "",
      ].join("\n"),
      respond: (_request, agent) => answer(`${agent} done`),
    });
    const result = await runWorkflow(options(workspace, { input: { topic: "tides" } }));
    expect(result.status).toBe("completed");
    await withStore(workspace.store, async (store) => {
      const checkpoints = await store.readCheckpoints(result.workflowRunId);
      // One with each batch: the start (with step one's start), step one's end (with step two's start), step two's end.
      expect(checkpoints).toHaveLength(3);
      const entries = [];
      for await (const entry of store.readEntries(result.workflowRunId)) entries.push(entry);
      let previousSeq = -1;
      for (const stored of checkpoints) {
        // The checkpoint covers the WORKFLOW_CHECKPOINT entry of the batch that holds the step's end.
        expect(entries[stored.seq]?.state).toBe("WORKFLOW_CHECKPOINT");
        const checkpoint = parseWorkflowCheckpoint(stored.document, ["one", "two"], {
          runId: result.workflowRunId,
          seq: stored.seq,
        });
        const ended = entries
          .slice(previousSeq + 1, stored.seq)
          .filter((entry) => entry.state === "WORKFLOW_STEP_END")
          .map((entry) => (entry.action as { step: string }).step);
        if (ended.length > 0) {
          expect(checkpoint).toMatchObject({
            completedStepId: ended.at(-1),
            stepIndex: ended.at(-1) === "one" ? 0 : 1,
          });
        } else expect(checkpoint).toMatchObject({ completedStepId: null, stepIndex: -1 });
        previousSeq = stored.seq;
      }
      const after = parseWorkflowCheckpoint(checkpoints[1]?.document, ["one", "two"], {
        runId: result.workflowRunId,
        seq: null,
      });
      expect(after).toMatchObject({
        v: 1,
        kind: "workflow",
        stepIndex: 0,
        completedStepId: "one",
        stepOutputs: { one: { report: "first done" } },
        context: { input: { topic: "tides" }, memory: { notes: "first done" } },
        memorySnapshot: { notes: "first done" },
        scheduler: {
          statuses: { one: "completed", two: "running" },
          completionOrder: ["one"],
          failing: false,
        },
      });
      expect(Object.keys(after.stepOutputs)).toEqual(["one"]);
      expect(after.steps.one).toMatchObject({
        status: "completed",
        runId: result.steps[0]?.runId,
        outcome: "COMPLETED_CHAT_ONLY",
      });
      // Checked against its schema: a checkpoint without its outputs is refused.
      const { stepOutputs: _dropped, ...incomplete } = after;
      expect(() => parseWorkflowCheckpoint(incomplete, ["one", "two"], { runId: "r", seq: 3 })).toThrow(
        expect.objectContaining({ code: "WORKFLOW_CHECKPOINT_INVALID" }),
      );
      expect(() =>
        parseWorkflowCheckpoint({ ...after, stepOutputs: {} }, ["one", "two"], { runId: "r", seq: 3 }),
      ).toThrow(
        expect.objectContaining({
          code: "WORKFLOW_CHECKPOINT_INVALID",
          details: expect.objectContaining({ key: "stepOutputs.one" }),
        }),
      );
    });
  });

  it("INV-CP-002 resume starts at correct step", async () => {
    const interrupt = new AbortController();
    const workspace = await workflowWorkspace({
      agents: { first: "", second: "", third: "" },
      workflow: [
        "id: resumable",
        "steps:",
        "  - { id: one, agent: first.md, prompt: 'one', saveAs: notes }",
        "  - { id: two, agent: second.md, prompt: 'two after {{steps.one.report}}', dependsOn: [one] }",
        "  - { id: three, agent: third.md, prompt: 'three with {{memory.notes}} and {{steps.two.report}}', dependsOn: [two] }",
        "output: '{{steps.three.report}}'",
        "",
      ].join("\n"),
      respond: (request, agent) => {
        // Interrupted while step two's model is asked for the first time: step one is checkpointed by then.
        if (agent === "second" && !interrupt.signal.aborted) interrupt.abort();
        return answer(`${agent}: ${taskOf(request)}`);
      },
    });
    const stopped = await runWorkflow(options(workspace, { signal: interrupt.signal }));
    expect(stopped.status).toBe("interrupted");
    expect(stopped.steps.map((step) => step.status)).toEqual(["completed", "interrupted", "pending"]);
    expect(workspace.requestsOf("first")).toHaveLength(1);

    const resumed = await resumeWorkflow({ workflowRunId: stopped.workflowRunId, store: workspace.store });
    expect(resumed).toMatchObject({ workflowRunId: stopped.workflowRunId, status: "completed" });
    expect(resumed.output).toBe("third: three with first: one and second: two after first: one");
    // Step one's output was restored from the checkpoint, not recomputed: its model was asked once in all.
    expect(workspace.requestsOf("first")).toHaveLength(1);
    expect(workspace.requestsOf("third")).toHaveLength(1);
    expect(resumed.steps[0]).toEqual({ ...stopped.steps[0] });
    await withStore(workspace.store, async (store) => {
      const resume = [];
      for await (const entry of store.readEntries(stopped.workflowRunId))
        if (entry.state === "WORKFLOW_RESUME") resume.push(entry);
      expect(resume).toHaveLength(1);
      // resumeFromStep = checkpoint.stepIndex + 1: step one (index 0) completed, the resume starts at step two.
      expect(resume[0]?.action).toMatchObject({ resume_from_step_index: 1 });
      expect(resume[0]?.result).toMatchObject({
        completed: ["one"],
        continuing: [{ step: "two", phase: "step" }],
      });
      expect(await verifyWorkflowRun(store, stopped.workflowRunId)).toMatchObject({
        ok: true,
        head_hash: resumed.headHash,
      });
    });
  });

  it("INV-PE-001 parallel execution respects limit", async () => {
    let inFlight = 0;
    let most = 0;
    let waiting: (() => void)[] = [];
    const workspace = await workflowWorkspace({
      agents: { worker: "" },
      workflow: [
        "id: parallel",
        "maxConcurrency: 2",
        "steps:",
        ...["a", "b", "c", "d"].map((id) => `  - { id: ${id}, agent: worker.md, prompt: 'part ${id}' }`),
        "",
      ].join("\n"),
      respond: async (request) => {
        inFlight++;
        most = Math.max(most, inFlight);
        // Held until two requests are in flight at once: the steps overlap at the model.
        await new Promise<void>((release) => {
          waiting.push(release);
          if (waiting.length === 2) {
            for (const waiter of waiting) waiter();
            waiting = [];
          }
        });
        inFlight--;
        return answer(`did ${taskOf(request)}`);
      },
    });
    const result = await runWorkflow(options(workspace));
    expect(result.status).toBe("completed");
    expect(most).toBe(2);
    // In the workflow's own record, never more than two steps between their start and their end.
    let running = 0;
    let mostRecorded = 0;
    for (const entry of await stepEntries(workspace.store, result.workflowRunId)) {
      running += entry.startsWith("WORKFLOW_STEP_START") ? 1 : -1;
      mostRecorded = Math.max(mostRecorded, running);
    }
    expect(mostRecorded).toBe(2);
  });

  it("INV-PE-002 dependencies honored", async () => {
    let workspace: WorkflowWorkspace;
    const seenBeforeB: string[] = [];
    workspace = await workflowWorkspace({
      agents: { worker: "" },
      workflow: [
        "id: diamond",
        "maxConcurrency: 3",
        "steps:",
        "  - { id: a, agent: worker.md, prompt: 'a' }",
        "  - { id: b, agent: worker.md, prompt: 'b' }",
        "  - { id: c, agent: worker.md, prompt: 'c from {{steps.a.report}} and {{steps.b.report}}', dependsOn: [a, b] }",
        "  - { id: d, agent: worker.md, prompt: 'd from {{steps.c.report}}', dependsOn: [c] }",
        "",
      ].join("\n"),
      respond: async (request: RecordedRequest) => {
        const task = taskOf(request);
        if (task === "b") {
          // b answers only once a's end is stored: c, which needs b too, must not have started by then (its start
          // would be stored in the same batch as a's end).
          await storeHoldsStep(workspace.store, "step/a/end");
          seenBeforeB.push(...storedWorkflowEntries(workspace.store).map((entry) => entry.step_id));
        }
        return answer(`[${task}]`);
      },
    });
    const result = await runWorkflow(options(workspace));
    expect(result.status).toBe("completed");
    expect(seenBeforeB).toContain("step/a/end");
    expect(seenBeforeB).not.toContain("step/c/start");
    // c was asked with both results, collected before it started; d after c.
    const tasks = workspace.requestsOf("worker").map(taskOf);
    expect(tasks.slice(2)).toEqual(["c from [a] and [b]", "d from [c from [a] and [b]]"]);
    const order = await stepEntries(workspace.store, result.workflowRunId);
    expect(order.indexOf("WORKFLOW_STEP_START step/c/start")).toBeGreaterThan(
      order.indexOf("WORKFLOW_STEP_END step/b/end"),
    );
    expect(order.indexOf("WORKFLOW_STEP_START step/c/start")).toBeGreaterThan(
      order.indexOf("WORKFLOW_STEP_END step/a/end"),
    );
  });

  it("INV-PE-003 failFast cancels running steps", async () => {
    let workspace: WorkflowWorkspace;
    workspace = await workflowWorkspace({
      agents: { failing: "", busy: "tools: [test]\ntoolTimeout: 20m" },
      workflow: [
        "id: fail-fast",
        "maxConcurrency: 2",
        "steps:",
        "  - { id: a, agent: failing.md, prompt: 'a' }",
        "  - { id: b, agent: busy.md, prompt: 'b' }",
        "  - { id: c, agent: busy.md, prompt: 'c', dependsOn: [a, b] }",
        "",
      ].join("\n"),
      respond: async (_request, agent) => {
        if (agent === "busy") return callTool("test__record_slowly", { key: "b-running", ms: 600_000 });
        // a fails only once b's tool is running: failFast must stop it.
        await fileHolds(workspace.recordFile, (text) => text.includes("b-running"));
        return refused;
      },
    });
    const result = await runWorkflow(options(workspace));
    expect(result.status).toBe("failed");
    expect(result.steps.map((step) => [step.id, step.status])).toEqual([
      ["a", "failed"],
      ["b", "cancelled"],
      ["c", "skipped"],
    ]);
    expect(result.errors).toEqual([
      expect.objectContaining({ stepId: "a", phase: "step", code: "MODEL_AUTHENTICATION_FAILED" }),
    ]);
    await withStore(workspace.store, async (store) => {
      expect(await store.getRun(result.steps[1]?.runId as string)).toMatchObject({
        status: "interrupted",
        outcome: "INTERRUPTED",
      });
    });
    expect(result.steps[2]?.runId).toBeNull();
    expect(workspace.requestsOf("busy").map(taskOf)).toEqual(["b"]);
  });

  it("INV-PE-003 continueOnError: every step whose dependencies completed runs, those downstream of a failure are skipped", async () => {
    const workspace = await workflowWorkspace({
      agents: { worker: "", failing: "" },
      workflow: [
        "id: keep-going",
        "failureStrategy: continueOnError",
        "steps:",
        "  - { id: a, agent: failing.md, prompt: 'a' }",
        "  - { id: b, agent: worker.md, prompt: 'b' }",
        "  - { id: c, agent: worker.md, prompt: 'c after {{steps.a.report}}', dependsOn: [a] }",
        "  - { id: d, agent: worker.md, prompt: 'd after {{steps.b.report}}', dependsOn: [b] }",
        "  - { id: e, agent: failing.md, prompt: 'e' }",
        "",
      ].join("\n"),
      respond: (request, agent) => (agent === "failing" ? refused : answer(`[${taskOf(request)}]`)),
    });
    const result = await runWorkflow(options(workspace));
    expect(result.status).toBe("completed_with_errors");
    expect(result.steps.map((step) => [step.id, step.status])).toEqual([
      ["a", "failed"],
      ["b", "completed"],
      ["c", "skipped"],
      ["d", "completed"],
      ["e", "failed"],
    ]);
    expect(result.errors.map((error) => [error.stepId, error.code])).toEqual([
      ["a", "MODEL_AUTHENTICATION_FAILED"],
      ["e", "MODEL_AUTHENTICATION_FAILED"],
    ]);
    expect(workspace.requestsOf("worker").map(taskOf)).toEqual(["b", "d after [b]"]);
  });

  it("INV-PE-003 rollback: after a failure, the completed steps' compensations run in reverse order of completion", async () => {
    const workspace = await workflowWorkspace({
      agents: { worker: "tools: [test]", failing: "" },
      workflow: [
        "id: undoable",
        "failureStrategy: rollback",
        "steps:",
        "  - id: a",
        "    agent: worker.md",
        "    prompt: 'do a'",
        "    compensate: { agent: worker.md, prompt: 'undo a, which said {{steps.a.report}}' }",
        "  - id: b",
        "    tool: { name: test__record, arguments: { key: b, value: done } }",
        "    compensate: { tool: { name: test__record, arguments: { key: undo-b, value: '{{steps.b.report}}' } } }",
        "  - { id: plain, agent: worker.md, prompt: 'plain' }",
        "  - { id: c, agent: failing.md, prompt: 'c', dependsOn: [a, b] }",
        "  - { id: never, agent: worker.md, prompt: 'never' }",
        "",
      ].join("\n"),
      respond: (request, agent) => {
        if (agent === "failing") return refused;
        const task = taskOf(request);
        if (task.startsWith("undo a") && toolResultsOf(request) === 0)
          return callTool("test__record", { key: "undo-a", value: "1" });
        return answer(`[${task}]`);
      },
    });
    const result = await runWorkflow(options(workspace));
    expect(result.status).toBe("rolled_back");
    expect(result.steps.map((step) => [step.id, step.status])).toEqual([
      ["a", "compensated"],
      ["b", "compensated"],
      ["plain", "completed"],
      ["c", "failed"],
      ["never", "skipped"],
    ]);
    // b completed after a, so it is undone first.
    expect(await recordedKeys(workspace.recordFile)).toEqual(["b", "undo-b", "undo-a"]);
    const order = (await stepEntries(workspace.store, result.workflowRunId)).filter((entry) =>
      entry.includes("COMPENSATION"),
    );
    expect(order).toEqual([
      "WORKFLOW_COMPENSATION_START step/b/compensation/start",
      "WORKFLOW_COMPENSATION_END step/b/compensation/end",
      "WORKFLOW_COMPENSATION_START step/a/compensation/start",
      "WORKFLOW_COMPENSATION_END step/a/compensation/end",
    ]);
    expect(workspace.requestsOf("worker").map(taskOf)).toContain("undo a, which said [do a]");
    await withStore(workspace.store, async (store) => {
      expect(await verifyWorkflowRun(store, result.workflowRunId)).toMatchObject({ ok: true });
    });
  });

  it("INV-PE-003 rollback: a compensation that fails makes the rollback fail, and the others still run", async () => {
    const workspace = await workflowWorkspace({
      agents: { worker: "", failing: "" },
      workflow: [
        "id: undo-fails",
        "failureStrategy: rollback",
        "steps:",
        "  - { id: a, agent: worker.md, prompt: 'a', compensate: { tool: { name: test__record, arguments: { key: undo-a, value: x } } } }",
        "  - { id: b, agent: worker.md, prompt: 'b', compensate: { agent: failing.md, prompt: 'undo b' } }",
        "  - { id: c, agent: failing.md, prompt: 'c' }",
        "",
      ].join("\n"),
      respond: (request, agent) => (agent === "failing" ? refused : answer(`[${taskOf(request)}]`)),
    });
    const result = await runWorkflow(options(workspace));
    expect(result.status).toBe("rollback_failed");
    expect(result.steps.map((step) => [step.id, step.status])).toEqual([
      ["a", "compensated"],
      ["b", "compensation_failed"],
      ["c", "failed"],
    ]);
    expect(result.errors.map((error) => [error.stepId, error.phase, error.code])).toEqual([
      ["b", "compensation", "MODEL_AUTHENTICATION_FAILED"],
      ["c", "step", "MODEL_AUTHENTICATION_FAILED"],
    ]);
    expect(await recordedKeys(workspace.recordFile)).toEqual(["undo-a"]);
  });

  it("a tool step goes through the tool pipeline: its output is the report, an unknown tool fails as data", async () => {
    const workspace = await workflowWorkspace({
      agents: { worker: "" },
      workflow: [
        "id: tools",
        "failureStrategy: continueOnError",
        "input: { type: object, properties: { count: { type: integer } } }",
        "steps:",
        "  - { id: sum, tool: { name: test__add, arguments: { a: '{{input.count}}', b: 2 } }, saveAs: total }",
        "  - { id: use, agent: worker.md, prompt: 'total {{memory.total}}', dependsOn: [sum] }",
        "  - { id: missing, tool: { name: test__nope, arguments: {} } }",
        "  - { id: invalid, tool: { name: test__add, arguments: { a: 'x' } } }",
        "",
      ].join("\n"),
      respond: (request) => answer(`[${taskOf(request)}]`),
    });
    const result = await runWorkflow(options(workspace, { input: { count: 40 } }));
    expect(result.steps.map((step) => [step.id, step.status, step.outcome])).toEqual([
      ["sum", "completed", "ok"],
      ["use", "completed", "COMPLETED_CHAT_ONLY"],
      ["missing", "failed", "failed"],
      ["invalid", "failed", "failed"],
    ]);
    expect(result.steps[0]?.report).toBe("42");
    expect(workspace.requestsOf("worker").map(taskOf)).toEqual(["total 42"]);
    expect(result.errors.map((error) => [error.stepId, error.code])).toEqual([
      ["missing", "TOOL_NOT_FOUND"],
      ["invalid", "TOOL_INPUT_INVALID"],
    ]);
  });

  it("a step's agent may be a registry id (agents/ folder) or a file path", async () => {
    const workspace = await workflowWorkspace({
      agents: { writer: "" },
      workflow: [
        "id: by-id",
        "steps:",
        "  - { id: research, agent: researcher, prompt: 'find' }",
        "  - { id: write, agent: ./writer.md, prompt: 'write {{steps.research.report}}', dependsOn: [research] }",
        "",
      ].join("\n"),
      respond: (request, agent) => answer(`${agent}: ${taskOf(request)}`),
    });
    await mkdir(join(workspace.directory, "agents"));
    await writeFile(
      join(workspace.directory, "agents", "researcher.md"),
      "---\nmodels: [local/m]\n---\nYou are agent researcher. Find things.\n",
    );
    const result = await runWorkflow(options(workspace));
    expect(result).toMatchObject({ status: "completed" });
    expect(result.steps.map((step) => step.report)).toEqual([
      "researcher: find",
      "writer: write researcher: find",
    ]);
    await withStore(workspace.store, async (store) => {
      expect(await store.getRun(result.steps[0]?.runId as string)).toMatchObject({ agentId: "researcher" });
    });
  });

  it("refuses a workflow whose step agent does not resolve before anything runs or is stored", async () => {
    const workspace = await workflowWorkspace({
      agents: { worker: "" },
      workflow:
        "id: typo\nsteps:\n  - { id: a, agent: worker.md, prompt: a }\n  - { id: b, agent: wroker.md, prompt: b }\n",
      respond: () => answer("x"),
    });
    await expect(runWorkflow(options(workspace))).rejects.toMatchObject({
      code: "WORKFLOW_FILE_INVALID",
      details: { key: "steps[1].agent", step: "b" },
    });
    expect(workspace.server.requests).toHaveLength(0);
    expect(storedWorkflowEntries(workspace.store)).toEqual([]);
  });

  it("refuses an input that does not match the input schema before anything runs or is stored", async () => {
    const workspace = await workflowWorkspace({
      agents: { worker: "" },
      workflow:
        "id: typed\ninput: { type: object, required: [n], properties: { n: { type: integer } } }\nsteps:\n  - { id: a, agent: worker.md, prompt: 'n={{input.n}}' }\n",
      respond: () => answer("x"),
    });
    await expect(runWorkflow(options(workspace, { input: { n: "seven" } }))).rejects.toMatchObject({
      code: "WORKFLOW_INPUT_INVALID",
      details: { problems: ["/n: must be integer"] },
    });
    expect(workspace.server.requests).toHaveLength(0);
    expect(storedWorkflowEntries(workspace.store)).toEqual([]);
  });
});

describe.skipIf(postgresTestUrl === "")("workflows on PostgreSQL", () => {
  it("stores the workflow run, its checkpoints and its steps' runs in a PostgreSQL store", async () => {
    const schema = `charter_test_${randomUUID().replaceAll("-", "").slice(0, 16)}`;
    const client = new pg.Client({ connectionString: postgresTestUrl });
    await client.connect();
    await client.query(`create schema ${schema}`);
    try {
      const workspace = await workflowWorkspace({
        agents: { worker: "" },
        workflow: [
          "id: on-postgres",
          "maxConcurrency: 2",
          "steps:",
          "  - { id: a, agent: worker.md, prompt: 'a' }",
          "  - { id: b, agent: worker.md, prompt: 'b from {{steps.a.report}}', dependsOn: [a] }",
          "",
        ].join("\n"),
        respond: (request) => answer(`[${taskOf(request)}]`),
      });
      const url = new URL(postgresTestUrl);
      url.searchParams.set("options", `-c search_path=${schema}`);
      const result = await runWorkflow(options(workspace, { store: url.toString() }));
      expect(result).toMatchObject({
        status: "completed",
        steps: [{ report: "[a]" }, { report: "[b from [a]]" }],
      });
      const store = await openRunStore({
        url: postgresTestUrl,
        postgres: { schema },
        environment: systemEnvironment,
      });
      try {
        expect(await store.getRun(result.workflowRunId)).toMatchObject({
          kind: "workflow",
          status: "completed",
        });
        expect(await store.listRuns({ kind: "workflow" })).toHaveLength(1);
        expect(await store.listRuns({ kind: "agent" })).toHaveLength(2);
        expect(await verifyWorkflowRun(store, result.workflowRunId)).toMatchObject({ ok: true });
      } finally {
        await store.close();
      }
    } finally {
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    }
  });
});
