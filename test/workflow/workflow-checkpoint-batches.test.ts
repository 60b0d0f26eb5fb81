import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";
import { currentRunOwner } from "../../src/runner/run-owner.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import { executeWorkflow } from "../../src/workflow/execute-workflow.js";
import { loadWorkflowFile } from "../../src/workflow/load-workflow-file.js";
import type { StepRunResult } from "../../src/workflow/step-run-result.js";
import { verifyWorkflowRun } from "../../src/workflow/verify-workflow-run.js";
import { buildWorkflowContract } from "../../src/workflow/workflow-contract.js";
import { createWorkflowRecorder } from "../../src/workflow/workflow-recorder.js";
import type { WorkflowStepExecutor } from "../../src/workflow/workflow-step-executor.js";

const hash = "a".repeat(64);

describe("workflow checkpoints", () => {
  it("steps that finish together are recorded in one checkpoint, and the run still verifies", async () => {
    const directory = await mkdtemp(join(tmpdir(), "charter-workflow-batches-"));
    const workflowPath = join(directory, "fan.workflow.yaml");
    // Three independent steps, then one that needs them all.
    await writeFile(
      workflowPath,
      [
        "id: fan",
        "maxConcurrency: 3",
        "steps:",
        ...["a", "b", "c"].flatMap((id) => [`  - id: ${id}`, "    agent: worker", '    prompt: "go"']),
        "  - id: join",
        "    agent: worker",
        '    prompt: "{{steps.a.report}} {{steps.b.report}} {{steps.c.report}}"',
        "    dependsOn: [a, b, c]",
      ].join("\n"),
    );
    const environment = deterministicEnvironment();
    const store = await openRunStore({ path: join(directory, "runs.db"), environment });
    try {
      const loaded = await loadWorkflowFile(workflowPath);
      const workflowRunId = "run_workflow";
      const recorder = await createWorkflowRecorder({
        store,
        runId: workflowRunId,
        contract: buildWorkflowContract(loaded, environment),
        redactor: new SecretRedactor(),
        environment,
        create: { tenantId: null, correlationId: null, owner: currentRunOwner() },
      });
      const prompts: string[] = [];
      // Each step answers at once, so a, b and c have all finished before the engine looks again.
      const executor: WorkflowStepExecutor = {
        async runAgent(request): Promise<StepRunResult> {
          prompts.push(request.prompt);
          return {
            runId: request.runId,
            status: "completed",
            outcome: "COMPLETED_CHAT_ONLY",
            report: prompts.length <= 3 ? `r${prompts.length}` : "joined",
            error: null,
            contractHash: hash,
            headHash: hash,
            entryCount: 0,
            totals: { turns: 1, tokensIn: 1, tokensOut: 1, costUsd: 0, toolsUsed: [] },
          };
        },
        continueAgent: () => Promise.reject(new Error("nothing to continue")),
        runTool: () => Promise.reject(new Error("no tool steps")),
      };
      const result = await executeWorkflow({
        definition: loaded.definition,
        workflowRunId,
        input: {},
        store,
        recorder,
        executor,
        environment,
      });
      expect(result.status).toBe("completed");
      expect(prompts.at(-1)).toBe("r1 r2 r3");
      const states: string[] = [];
      for await (const entry of store.readEntries(workflowRunId)) states.push(entry.state);
      // The start (a, b, c started), the three ends with join's start, join's end; then the workflow's end.
      expect(states.filter((state) => state === "WORKFLOW_CHECKPOINT")).toHaveLength(3);
      // Each end is recorded before what it started, in the order the steps finished.
      const steps = states.filter((state) => state.startsWith("WORKFLOW_STEP"));
      expect(steps).toEqual([
        "WORKFLOW_STEP_START",
        "WORKFLOW_STEP_START",
        "WORKFLOW_STEP_START",
        "WORKFLOW_STEP_END",
        "WORKFLOW_STEP_END",
        "WORKFLOW_STEP_END",
        "WORKFLOW_STEP_START",
        "WORKFLOW_STEP_END",
      ]);
      expect((await verifyWorkflowRun(store, workflowRunId)).ok).toBe(true);
    } finally {
      await store.close();
    }
  });
});
