import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { WorkflowResult } from "../../src/workflow/workflow-result.js";
import { charterProcess, cli } from "../cli/cli-harness.js";
import {
  answer,
  closeWorkflowServers,
  recordedKeys,
  taskOf,
  type WorkflowWorkspace,
  workflowWorkspace,
} from "./workflow-harness.js";

afterEach(closeWorkflowServers);

const refused = { kind: "error", status: 401 } as const;

function flags(workspace: WorkflowWorkspace): string[] {
  return ["--store", workspace.store, "--runs-dir", join(workspace.directory, "runs")];
}

async function twoSteps(options: { failSecond?: boolean } = {}) {
  return workflowWorkspace({
    agents: { writer: "", reviewer: "" },
    workflow: [
      "id: notes",
      "input: { type: object, required: [range], properties: { range: { type: string } } }",
      "steps:",
      "  - { id: draft, agent: writer.md, prompt: 'Notes for {{input.range}}' }",
      "  - { id: review, agent: reviewer.md, prompt: 'Review: {{steps.draft.report}}', dependsOn: [draft] }",
      "output: { notes: '{{steps.draft.report}}', review: '{{steps.review.report}}' }",
      "",
    ].join("\n"),
    respond: (request, agent) =>
      agent === "reviewer" && options.failSecond === true ? refused : answer(`${agent}: ${taskOf(request)}`),
  });
}

describe("charter workflow run, show and verify", () => {
  it("--json prints the result document; runs list shows the workflow run with its kind; verify checks it and every step's run", async () => {
    const workspace = await twoSteps();
    await writeFile(join(workspace.directory, "input.json"), JSON.stringify({ range: "v1..v2" }));
    const inputFile = `@${join(workspace.directory, "input.json")}`;
    const ran = await cli([
      "workflow",
      "run",
      workspace.workflowPath,
      "--input",
      inputFile,
      "--json",
      ...flags(workspace),
    ]);
    expect(ran.exitCode).toBe(0);
    const result = JSON.parse(ran.stdout) as WorkflowResult;
    expect(Object.keys(result).sort()).toEqual(
      [
        "accounting",
        "entries",
        "errors",
        "headHash",
        "output",
        "status",
        "steps",
        "workflowId",
        "workflowRunId",
      ].sort(),
    );
    expect(result).toMatchObject({
      workflowId: "notes",
      status: "completed",
      errors: [],
      output: { notes: "writer: Notes for v1..v2", review: "reviewer: Review: writer: Notes for v1..v2" },
      accounting: { turns: 2, costUsd: 0 },
    });
    expect(result.accounting.tokens.input).toBeGreaterThan(0);
    for (const step of result.steps) {
      expect(Object.keys(step).sort()).toEqual(["durationMs", "id", "outcome", "report", "runId", "status"]);
      expect(step).toMatchObject({ status: "completed", outcome: "COMPLETED_CHAT_ONLY" });
      expect(step.durationMs).toBeGreaterThanOrEqual(0);
    }

    const listed = JSON.parse((await cli(["runs", "list", "--json", "--store", workspace.store])).stdout) as {
      runId: string;
      kind: string;
      agentId: string;
      parentRunId: string | null;
      status: string;
      outcome: string;
      chainHead: string;
    }[];
    expect(listed.find((run) => run.runId === result.workflowRunId)).toMatchObject({
      kind: "workflow",
      agentId: "notes",
      status: "completed",
      outcome: "completed",
      chainHead: result.headHash,
    });
    expect(listed.filter((run) => run.parentRunId === result.workflowRunId).map((run) => run.kind)).toEqual([
      "agent",
      "agent",
    ]);
    const line = (await cli(["runs", "list", "--store", workspace.store])).stdout
      .split("\n")
      .find((text) => text.startsWith(result.workflowRunId));
    expect(line?.split("  ").slice(0, 4)).toEqual([result.workflowRunId, "workflow", "notes", "completed"]);

    const verified = await cli(["verify", result.workflowRunId, "--store", workspace.store]);
    expect(verified.exitCode).toBe(0);
    expect(verified.stdout.split("\n")).toEqual([
      `verified: ${result.entries} entries, head ${result.headHash}`,
      expect.stringMatching(
        new RegExp(`^  step draft: run ${result.steps[0]?.runId} verified: \\d+ entries, head [0-9a-f]{64}$`),
      ),
      expect.stringMatching(
        new RegExp(
          `^  step review: run ${result.steps[1]?.runId} verified: \\d+ entries, head [0-9a-f]{64}$`,
        ),
      ),
      "",
    ]);

    const shown = await cli(["workflow", "show", result.workflowRunId, "--json", "--store", workspace.store]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ ...result, resumeCommand: null });

    // A workflow run has no conversation of its own, nor a session to replay: its steps' runs do.
    const conversation = await cli([
      "runs",
      "show",
      result.workflowRunId,
      "--conversation",
      "--store",
      workspace.store,
    ]);
    expect(conversation.exitCode).toBe(4);
    expect(conversation.stderr).toContain(`charter workflow show ${result.workflowRunId} shows its steps`);
    const replayed = await cli(["replay", result.workflowRunId, "--store", workspace.store]);
    expect(replayed.exitCode).toBe(4);
    expect(replayed.stderr).toContain(
      `run ${result.workflowRunId} is a workflow run: replay its steps' runs`,
    );
    const stepReplay = await cli([
      "replay",
      result.steps[0]?.runId as string,
      "--json",
      "--store",
      workspace.store,
    ]);
    expect(JSON.parse(stepReplay.stdout)).toMatchObject({ ok: true });

    // A workflow run is continued by charter workflow resume, not charter resume.
    const wrongResume = await cli(["resume", result.workflowRunId, "--store", workspace.store]);
    expect(wrongResume.exitCode).toBe(1);
    expect(wrongResume.stderr).toContain(
      `RUN_NOT_RESUMABLE: run ${result.workflowRunId} is a workflow run: continue it with charter workflow resume`,
    );
    // A completed workflow run is not resumed.
    const again = await cli(["workflow", "resume", result.workflowRunId, "--store", workspace.store]);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain("RUN_NOT_RESUMABLE");
  });

  it("prints the output on stdout and each step on stderr; a failed workflow exits 1", async () => {
    const workspace = await twoSteps({ failSecond: true });
    const ran = await charterProcess(
      ["workflow", "run", workspace.workflowPath, "--input", '{"range":"r"}', ...flags(workspace)],
      {
        cwd: workspace.directory,
      },
    );
    expect(ran.exitCode).toBe(1);
    expect(ran.stdout).toBe("");
    const lines = ran.stderr.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ {2}draft {2}completed {2}run_\w+ {2}COMPLETED_CHAT_ONLY {2}\d+ms$/);
    expect(lines[1]).toMatch(/^ {2}review {2}failed {2}run_\w+ {2}FAILED_PREFLIGHT {2}\d+ms$/);
    expect(lines[2]).toMatch(/^ {2}error: step review \(step\): MODEL_AUTHENTICATION_FAILED: /);
    expect(lines[3]).toMatch(
      /^workflow notes failed: run run_\w+, tokens \d+\/\d+, cost \$0, head [0-9a-f]{64}$/,
    );

    const good = await twoSteps();
    const completed = await charterProcess(
      ["workflow", "run", good.workflowPath, "--input", '{"range":"r"}', "--progress", ...flags(good)],
      { cwd: good.directory },
    );
    expect(completed.exitCode).toBe(0);
    expect(JSON.parse(completed.stdout)).toEqual({
      notes: "writer: Notes for r",
      review: "reviewer: Review: writer: Notes for r",
    });
    expect(completed.stderr).toMatch(
      /^\[workflow\] step draft started \(run run_\w+\)\n\[workflow\] step draft completed in \d+ ms\n\[workflow\] step review started/,
    );
  }, 60_000);

  it("refuses invalid input and invalid files with exit code 4, before anything is stored", async () => {
    const workspace = await twoSteps();
    const noInput = await cli(["workflow", "run", workspace.workflowPath, ...flags(workspace)]);
    expect(noInput.exitCode).toBe(4);
    expect(noInput.stderr).toContain("WORKFLOW_INPUT_INVALID");
    expect(noInput.stderr).toContain("must have required property 'range'");
    const badJson = await cli([
      "workflow",
      "run",
      workspace.workflowPath,
      "--input",
      "{range",
      ...flags(workspace),
    ]);
    expect(badJson.exitCode).toBe(4);
    expect(badJson.stderr).toContain("ARGUMENT_INVALID: --input value is not valid JSON");
    await writeFile(
      workspace.workflowPath,
      "id: notes\nsteps:\n  - { id: a, agent: writer.md, prompt: '{{steps.b.report}}' }\n",
    );
    const badFile = await cli(["workflow", "run", workspace.workflowPath, ...flags(workspace)]);
    expect(badFile.exitCode).toBe(4);
    expect(badFile.stderr).toContain("WORKFLOW_FILE_INVALID: Workflow file");
    expect(badFile.stderr).toContain(
      'steps[0].prompt, line 3, step "a": {{steps.b.report}} names no step "b"',
    );
    expect(workspace.server.requests).toHaveLength(0);
    expect(JSON.parse((await cli(["runs", "list", "--json", "--store", workspace.store])).stdout)).toEqual(
      [],
    );
  });

  it("verify names a workflow record the chain does not bind: the run row's outcome, a step run's parent", async () => {
    const workspace = await twoSteps({ failSecond: true });
    const ran = await cli([
      "workflow",
      "run",
      workspace.workflowPath,
      "--input",
      '{"range":"r"}',
      "--json",
      ...flags(workspace),
    ]);
    const result = JSON.parse(ran.stdout) as WorkflowResult;
    expect(result.status).toBe("failed");
    const database = new Database(workspace.store);
    try {
      database
        .prepare("update charter_runs set outcome = 'completed', status = 'completed' where run_id = ?")
        .run(result.workflowRunId);
      const rowTampered = await cli(["verify", result.workflowRunId, "--json", "--store", workspace.store]);
      expect(rowTampered.exitCode).toBe(1);
      expect(JSON.parse(rowTampered.stdout)).toMatchObject({
        ok: false,
        first_bad_entry: { reason_code: "RECORD_MISMATCH", record: "run status" },
      });
      database
        .prepare("update charter_runs set outcome = 'failed', status = 'failed' where run_id = ?")
        .run(result.workflowRunId);
      expect((await cli(["verify", result.workflowRunId, "--store", workspace.store])).exitCode).toBe(0);

      const draftRun = result.steps[0]?.runId as string;
      database.prepare("update charter_runs set parent_run_id = null where run_id = ?").run(draftRun);
      const orphaned = await cli(["verify", result.workflowRunId, "--json", "--store", workspace.store]);
      expect(orphaned.exitCode).toBe(1);
      expect(JSON.parse(orphaned.stdout)).toMatchObject({
        ok: false,
        first_bad_entry: {
          reason_code: "RECORD_MISMATCH",
          record: `step draft run ${draftRun}`,
          detail: `step draft: run ${draftRun} names no run as its parent, not this workflow run`,
        },
      });
    } finally {
      database.close();
    }
  });

  it("each failure strategy through the charter command: failFast, continueOnError and rollback, each exit 1", async () => {
    const workflow = (strategy: string) =>
      [
        `id: ${strategy.toLowerCase()}`,
        `failureStrategy: ${strategy}`,
        "steps:",
        "  - { id: a, agent: writer.md, prompt: 'a', compensate: { tool: { name: test__record, arguments: { key: undo-a, value: x } } } }",
        "  - { id: b, agent: failing.md, prompt: 'b' }",
        "  - { id: c, agent: writer.md, prompt: 'c after {{steps.b.report}}', dependsOn: [b] }",
        "  - { id: d, agent: writer.md, prompt: 'd' }",
        "",
      ].join("\n");
    const expected: Record<string, { status: string; steps: string[] }> = {
      failFast: { status: "failed", steps: ["completed", "failed", "skipped", "skipped"] },
      continueOnError: {
        status: "completed_with_errors",
        steps: ["completed", "failed", "skipped", "completed"],
      },
      rollback: { status: "rolled_back", steps: ["compensated", "failed", "skipped", "skipped"] },
    };
    for (const [strategy, outcome] of Object.entries(expected)) {
      const workspace = await workflowWorkspace({
        agents: { writer: "", failing: "" },
        workflow: workflow(strategy),
        respond: (request, agent) => (agent === "failing" ? refused : answer(`[${taskOf(request)}]`)),
      });
      const ran = await charterProcess(
        ["workflow", "run", workspace.workflowPath, "--json", ...flags(workspace)],
        {
          cwd: workspace.directory,
        },
      );
      expect(ran.exitCode).toBe(1);
      const result = JSON.parse(ran.stdout) as WorkflowResult;
      expect(result.status).toBe(outcome.status);
      expect(result.steps.map((step) => step.status)).toEqual(outcome.steps);
      expect(result.errors.map((error) => [error.stepId, error.code])).toEqual([
        ["b", "MODEL_AUTHENTICATION_FAILED"],
      ]);
      expect((await recordedKeys(workspace.recordFile)).includes("undo-a")).toBe(strategy === "rollback");
    }
  }, 120_000);
});
