import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import type { WorkflowResult } from "../../src/workflow/workflow-result.js";
import { cli } from "../cli/cli-harness.js";
import {
  answer,
  closeWorkflowServers,
  fileHolds,
  gate,
  killCharterProcesses,
  recordedKeys,
  startCharterProcess,
  storeHoldsStep,
  taskOf,
  toolResultsOf,
  type WorkflowWorkspace,
  workflowWorkspace,
} from "./workflow-harness.js";

/**
 * `charter workflow run` as a real process, killed with SIGKILL at several points, then `charter workflow resume`:
 * no completed step runs again and no committed turn of a step's run is asked of the model again (counted at the
 * scripted model server, which knows each agent by its system prompt); the workflow and every step's run verify.
 */
afterEach(async () => {
  killCharterProcesses();
  await closeWorkflowServers();
});

function runArguments(workspace: WorkflowWorkspace): string[] {
  return [
    "workflow",
    "run",
    workspace.workflowPath,
    "--json",
    "--store",
    workspace.store,
    "--runs-dir",
    join(workspace.directory, "runs"),
  ];
}

/** The one workflow run in the store, which the killed process left running: abandoned, with its resume command. */
async function abandonedWorkflowRun(workspace: WorkflowWorkspace): Promise<string> {
  const listed = JSON.parse((await cli(["runs", "list", "--json", "--store", workspace.store])).stdout) as {
    runId: string;
    kind: string;
    status: string;
    resumeCommand: string | null;
  }[];
  const workflows = listed.filter((run) => run.kind === "workflow");
  expect(workflows).toHaveLength(1);
  const [run] = workflows;
  expect(run).toMatchObject({ status: "abandoned", resumeCommand: `charter workflow resume ${run?.runId}` });
  return run?.runId as string;
}

async function resume(workspace: WorkflowWorkspace, runId: string): Promise<WorkflowResult> {
  const resumed = await cli(["workflow", "resume", runId, "--json", "--store", workspace.store]);
  expect(resumed.exitCode).toBe(0);
  return JSON.parse(resumed.stdout) as WorkflowResult;
}

/** The workflow and every run its steps started verify, and `workflow show` reads what the resume returned. */
async function expectVerified(workspace: WorkflowWorkspace, result: WorkflowResult): Promise<void> {
  const verified = await cli(["verify", result.workflowRunId, "--json", "--store", workspace.store]);
  expect(verified.exitCode).toBe(0);
  const report = JSON.parse(verified.stdout) as {
    ok: boolean;
    head_hash: string;
    children: { ok: boolean }[];
  };
  expect(report).toMatchObject({ ok: true, head_hash: result.headHash });
  expect(report.children.every((child) => child.ok)).toBe(true);
  const shown = JSON.parse(
    (await cli(["workflow", "show", result.workflowRunId, "--json", "--store", workspace.store])).stdout,
  );
  expect(shown).toMatchObject({
    status: result.status,
    steps: result.steps,
    output: result.output,
    headHash: result.headHash,
  });
}

describe("kill -9 of charter workflow run, then charter workflow resume", () => {
  it("killed after a step's checkpoint, before the next step committed anything: the completed step is not run again", async () => {
    const killPoint = gate();
    const never = gate();
    let firstProcess = true;
    const workspace = await workflowWorkspace({
      agents: { first: "", second: "", third: "" },
      workflow: [
        "id: sequence",
        "steps:",
        "  - { id: a, agent: first.md, prompt: 'a', saveAs: notes }",
        "  - { id: b, agent: second.md, prompt: 'b after {{steps.a.report}}', dependsOn: [a] }",
        "  - { id: c, agent: third.md, prompt: 'c with {{memory.notes}} and {{steps.b.report}}', dependsOn: [b] }",
        "output: '{{steps.c.report}}'",
        "",
      ].join("\n"),
      respond: async (request, agent) => {
        if (agent === "second" && firstProcess) {
          // Step a is checkpointed (its end is stored with b's start); b's model call never answers in this process.
          killPoint.open();
          await never.opened;
        }
        return answer(`${agent}: ${taskOf(request)}`);
      },
    });
    const run = startCharterProcess(runArguments(workspace), workspace.directory);
    await killPoint.opened;
    await run.kill();
    firstProcess = false;
    const runId = await abandonedWorkflowRun(workspace);

    const result = await resume(workspace, runId);
    never.open();
    expect(result).toMatchObject({
      workflowRunId: runId,
      status: "completed",
      output: "third: c with first: a and second: b after first: a",
    });
    // a completed before the kill: never asked again. b had committed nothing: asked again. c ran once.
    expect(workspace.requestsOf("first")).toHaveLength(1);
    expect(workspace.requestsOf("second")).toHaveLength(2);
    expect(workspace.requestsOf("third")).toHaveLength(1);
    await expectVerified(workspace, result);
  }, 120_000);

  it("killed inside a step's tool call: the step's run resumes after its committed turn, the tool is not run twice", async () => {
    let firstProcess = true;
    const workspace = await workflowWorkspace({
      agents: { first: "", busy: "tools: [test]\ntoolTimeout: 20m" },
      workflow: [
        "id: tool-call",
        "steps:",
        "  - { id: a, agent: first.md, prompt: 'a' }",
        "  - { id: b, agent: busy.md, prompt: 'b after {{steps.a.report}}', dependsOn: [a] }",
        "output: '{{steps.b.report}}'",
        "",
      ].join("\n"),
      respond: (request, agent): ScriptedStep => {
        if (agent === "busy" && toolResultsOf(request) === 0) {
          if (!firstProcess) throw new Error("the committed turn was asked again");
          return {
            kind: "tool_calls",
            calls: [{ name: "test__record_slowly", arguments: { key: "b-tool", ms: 600_000 } }],
          };
        }
        return answer(`${agent}: ${taskOf(request)}`);
      },
    });
    const run = startCharterProcess(runArguments(workspace), workspace.directory);
    await fileHolds(workspace.recordFile, (text) => text.includes("b-tool"));
    await run.kill();
    firstProcess = false;
    const runId = await abandonedWorkflowRun(workspace);

    const result = await resume(workspace, runId);
    expect(result).toMatchObject({ status: "completed", output: "busy: b after first: a" });
    // The step continued its own run: the same run id, its tool call (not idempotent) not run again, and only the
    // turn after it asked of the model.
    expect(await recordedKeys(workspace.recordFile)).toEqual(["b-tool"]);
    expect(workspace.requestsOf("first")).toHaveLength(1);
    expect(workspace.requestsOf("busy")).toHaveLength(2);
    expect(result.steps[1]).toMatchObject({ id: "b", status: "completed", outcome: "COMPLETED_CHAT_ONLY" });
    const shownRun = JSON.parse(
      (await cli(["runs", "show", result.steps[1]?.runId as string, "--json", "--store", workspace.store]))
        .stdout,
    );
    expect(shownRun).toMatchObject({ parentRunId: runId, status: "completed" });
    await expectVerified(workspace, result);
  }, 120_000);

  it("killed during a parallel level: the step that completed is not run again, the one in flight is", async () => {
    const never = gate();
    let firstProcess = true;
    const workspace = await workflowWorkspace({
      agents: { fast: "", slow: "", joiner: "" },
      workflow: [
        "id: parallel-kill",
        "maxConcurrency: 2",
        "steps:",
        "  - { id: a, agent: fast.md, prompt: 'a' }",
        "  - { id: b, agent: slow.md, prompt: 'b' }",
        "  - { id: c, agent: joiner.md, prompt: 'c from {{steps.a.report}} and {{steps.b.report}}', dependsOn: [a, b] }",
        "output: '{{steps.c.report}}'",
        "",
      ].join("\n"),
      respond: async (request, agent) => {
        if (agent === "slow" && firstProcess) await never.opened;
        return answer(`${agent}: ${taskOf(request)}`);
      },
    });
    const run = startCharterProcess(runArguments(workspace), workspace.directory);
    // a completed and was checkpointed while b is still waiting for its model: both were running at once.
    await storeHoldsStep(workspace.store, "step/a/end");
    expect(workspace.requestsOf("slow")).toHaveLength(1);
    await run.kill();
    firstProcess = false;
    const runId = await abandonedWorkflowRun(workspace);

    const result = await resume(workspace, runId);
    never.open();
    expect(result).toMatchObject({ status: "completed", output: "joiner: c from fast: a and slow: b" });
    expect(workspace.requestsOf("fast")).toHaveLength(1);
    expect(workspace.requestsOf("slow")).toHaveLength(2);
    expect(workspace.requestsOf("joiner")).toHaveLength(1);
    await expectVerified(workspace, result);
  }, 120_000);

  it("interrupted with SIGINT: the workflow run is interrupted (exit 1) and resumes where it stopped", async () => {
    const reached = gate();
    const never = gate();
    let firstProcess = true;
    const workspace = await workflowWorkspace({
      agents: { first: "", second: "" },
      workflow: [
        "id: interrupted",
        "steps:",
        "  - { id: a, agent: first.md, prompt: 'a' }",
        "  - { id: b, agent: second.md, prompt: 'b after {{steps.a.report}}', dependsOn: [a] }",
        "output: '{{steps.b.report}}'",
        "",
      ].join("\n"),
      respond: async (request, agent) => {
        if (agent === "second" && firstProcess) {
          reached.open();
          await never.opened;
        }
        return answer(`${agent}: ${taskOf(request)}`);
      },
    });
    const run = startCharterProcess(runArguments(workspace), workspace.directory);
    await reached.opened;
    run.interrupt();
    expect(await run.exited).toBe(1);
    firstProcess = false;
    never.open();
    const stopped = JSON.parse(run.stdout()) as WorkflowResult;
    expect(stopped).toMatchObject({ status: "interrupted", output: null });
    expect(stopped.steps.map((step) => step.status)).toEqual(["completed", "interrupted"]);
    const shown = JSON.parse(
      (await cli(["workflow", "show", stopped.workflowRunId, "--json", "--store", workspace.store])).stdout,
    );
    expect(shown).toMatchObject({
      status: "interrupted",
      resumeCommand: `charter workflow resume ${stopped.workflowRunId}`,
      headHash: stopped.headHash,
    });

    const result = await resume(workspace, stopped.workflowRunId);
    expect(result).toMatchObject({ status: "completed", output: "second: b after first: a" });
    expect(workspace.requestsOf("first")).toHaveLength(1);
    await expectVerified(workspace, result);
  }, 120_000);
});
