import { homedir } from "node:os";
import { dirname } from "node:path";
import { type ConfigurationOverlay, loadConfiguration } from "../config/load-configuration.js";
import { CharterError } from "../foundation/charter-error.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import type { ModelCallBudget } from "../runner/model-call-budget.js";
import { currentRunOwner, defaultHeartbeatIntervalMilliseconds } from "../runner/run-owner.js";
import { selectRunStore } from "../runner/select-run-store.js";
import type { RunToolPermissions } from "../runner/tool-permissions.js";
import { openRunStore } from "../store/open-run-store.js";
import { createWorkflowStepExecutor } from "./create-workflow-step-executor.js";
import { executeWorkflow } from "./execute-workflow.js";
import { verifyWorkflowRun } from "./verify-workflow-run.js";
import { parseWorkflowCheckpoint } from "./workflow-checkpoint.js";
import { readWorkflowContract } from "./workflow-contract.js";
import type { WorkflowProgressEvent } from "./workflow-progress-event.js";
import { createWorkflowRecorder } from "./workflow-recorder.js";
import type { WorkflowResult } from "./workflow-result.js";
import type { StepRunDecisions } from "./workflow-run-context.js";

export interface ResumeWorkflowOptions {
  readonly workflowRunId: string;
  /** The run store the workflow run is in; default as for `runWorkflow`, from the configuration found from `cwd`. */
  readonly store?: string;
  /** A configuration layer read only to find the run store (the workflow goes on under the one it started with). */
  readonly configPath?: string;
  readonly cwd?: string;
  readonly runsDirectory?: string;
  readonly homeDirectory?: string;
  readonly etcDirectory?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  /** `--tenant`: the tenant whose workflow run it is (absent: the runs stored without one); another's is not found. */
  readonly tenantId?: string;
  readonly environment?: RuntimeEnvironment;
  readonly signal?: AbortSignal;
  readonly onProgress?: (event: WorkflowProgressEvent) => void;
  /** As for `runWorkflow`: a configuration layer over every other for each agent step's run. */
  readonly configurationOverlay?: ConfigurationOverlay;
  /**
   * What every agent step may do with tools (a server run: its caller's role; deletes always wait for a human).
   * Recorded with each step's run: a continued step keeps the permissions it started with.
   */
  readonly toolPermissions?: RunToolPermissions;
  /** Asked before every model call of every agent step (a server's tenant budgets). */
  readonly modelCallBudget?: ModelCallBudget;
  /**
   * A person's decisions on the calls the continued steps' runs wait on, by step run id (a server's approvals):
   * each such step continues with them; a step whose run waits on calls not decided here stops for them again.
   */
  readonly stepDecisions?: Readonly<Record<string, StepRunDecisions>>;
}

const resumable = ["running", "interrupted"] as const;

/**
 * `charter workflow resume <workflow-run-id>`: continues a workflow run that was interrupted or whose process
 * died, from its latest checkpoint (checked against its schema): completed steps' outputs are restored, never
 * recomputed; each step that was running continues its own run (the durable resume: no committed turn runs again);
 * the steps after them run as the scheduler starts them. The run must verify first (RUN_TAMPERED otherwise), and
 * it is reopened only from the status and chain end it was read at (RUN_NOT_RESUMABLE when another resume got there
 * first). It runs the workflow recorded in the run, under the configuration it was started with.
 */
export async function resumeWorkflow(options: ResumeWorkflowOptions): Promise<WorkflowResult> {
  const environment = options.environment ?? systemEnvironment;
  const runId = options.workflowRunId;
  const { url } = await selectRunStore({
    store: options.store,
    ...(options.configPath !== undefined ? { configPath: options.configPath } : {}),
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {}),
    ...(options.etcDirectory !== undefined ? { etcDirectory: options.etcDirectory } : {}),
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
    ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
  });
  const store = await openRunStore({ url, environment, tenantId: options.tenantId ?? null });
  const owner = currentRunOwner();
  let heartbeat: ReturnType<typeof setInterval> | null = null;
  try {
    const run = await store.getRun(runId);
    if (run === null) {
      throw new CharterError("RUN_NOT_FOUND", `no run ${runId} in ${store.location}`, { details: { runId } });
    }
    if (run.kind !== "workflow") {
      throw new CharterError(
        "RUN_NOT_RESUMABLE",
        `run ${runId} is not a workflow run: continue it with charter resume ${runId}`,
        { details: { runId, reason: "not_a_workflow_run" } },
      );
    }
    if (!(resumable as readonly string[]).includes(run.status)) {
      throw new CharterError(
        "RUN_NOT_RESUMABLE",
        `workflow run ${runId} is ${run.status} (${run.outcome ?? "no outcome"}): only ${resumable.join(" and ")} workflow runs resume`,
        { details: { runId, status: run.status, outcome: run.outcome } },
      );
    }
    const verification = await verifyWorkflowRun(store, runId);
    const fault = verification.first_bad_entry;
    // Only the workflow's own records are held here: a step's run that does not verify is refused by its own resume.
    if (!verification.ok && fault !== null && !fault.record?.startsWith("step ")) {
      throw new CharterError(
        "RUN_TAMPERED",
        `workflow run ${runId} does not verify (${fault.record ?? `entry ${fault.seq}`}: ${fault.reason_code}: ${fault.detail}): it is not continued`,
        { details: { runId, record: fault.record ?? null, reasonCode: fault.reason_code, seq: fault.seq } },
      );
    }
    const { contract, definition } = readWorkflowContract(run.contract, runId);
    const stored = await store.latestCheckpoint(runId);
    if (stored === null) {
      throw new CharterError("RUN_NOT_RESUMABLE", `workflow run ${runId} has no checkpoint`, {
        details: { runId, reason: "no_checkpoint" },
      });
    }
    const checkpoint = parseWorkflowCheckpoint(
      stored.document,
      definition.steps.map((step) => step.id),
      { runId, seq: stored.seq },
    );
    const invocation = await readInvocation(store, runId);
    const home = options.homeDirectory ?? homedir();
    const { configuration, secrets } = await loadConfiguration({
      ...(invocation.configPath !== null ? { configPath: invocation.configPath } : {}),
      cwd: invocation.cwd,
      promptDirectory: dirname(contract.workflow_file),
      homeDirectory: home,
      ...(options.etcDirectory !== undefined ? { etcDirectory: options.etcDirectory } : {}),
      ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
      ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
    });
    const redactor = new SecretRedactor();
    for (const secret of secrets) redactor.addSecret(secret.value, secret.label);
    try {
      await store.reopenRun(runId, {
        from: [run.status],
        expected: { entryCount: run.entryCount, headHash: run.headHash },
        owner,
      });
    } catch (error) {
      const reason = CharterError.isInstance(error) ? error.details.reason : undefined;
      if (reason !== "chain_mismatch" && reason !== "status_not_allowed") throw error;
      throw new CharterError(
        "RUN_NOT_RESUMABLE",
        `workflow run ${runId} changed while this resume was starting (another resume continued it)`,
        { details: { runId, reason: "concurrent_resume" }, cause: error },
      );
    }
    heartbeat = setInterval(
      () => void store.heartbeatRun(runId, owner).catch(() => undefined),
      environment.heartbeatIntervalMilliseconds ?? defaultHeartbeatIntervalMilliseconds,
    );
    heartbeat.unref();
    const recorder = await createWorkflowRecorder({
      store,
      runId,
      contract,
      redactor,
      environment,
      continueFrom: { entryCount: run.entryCount, headHash: run.headHash, createdAt: run.header.created_at },
    });
    const executor = createWorkflowStepExecutor({
      workflowRunId: runId,
      workflowDirectory: dirname(contract.workflow_file),
      storeUrl: url,
      configuration,
      configPath: invocation.configPath,
      cwd: invocation.cwd,
      ...(options.runsDirectory !== undefined ? { runsDirectory: options.runsDirectory } : {}),
      ...(options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {}),
      ...(options.etcDirectory !== undefined ? { etcDirectory: options.etcDirectory } : {}),
      ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
      ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
      tenantId: run.tenantId,
      correlationId: run.correlationId,
      environment,
      redactor,
      ...(options.configurationOverlay !== undefined
        ? { configurationOverlay: options.configurationOverlay }
        : {}),
      ...(options.toolPermissions !== undefined ? { toolPermissions: options.toolPermissions } : {}),
      ...(options.modelCallBudget !== undefined ? { modelCallBudget: options.modelCallBudget } : {}),
      ...(options.stepDecisions !== undefined ? { stepDecisions: options.stepDecisions } : {}),
    });
    return await executeWorkflow({
      definition,
      workflowRunId: runId,
      input: checkpoint.context.input,
      store,
      recorder,
      executor,
      environment,
      restored: { checkpoint, seq: stored.seq },
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
    });
  } finally {
    if (heartbeat !== null) clearInterval(heartbeat);
    await store.close();
  }
}

/** How the workflow was started (its WORKFLOW_START entry): the configuration file and working directory. */
async function readInvocation(
  store: Awaited<ReturnType<typeof openRunStore>>,
  runId: string,
): Promise<{ configPath: string | null; cwd: string }> {
  for await (const entry of store.readEntries(runId)) {
    if (entry.state !== "WORKFLOW_START") break;
    const invocation = (entry.action as { invocation?: { config_path?: unknown; cwd?: unknown } | null })
      .invocation;
    if (typeof invocation?.cwd === "string") {
      return {
        configPath: typeof invocation.config_path === "string" ? invocation.config_path : null,
        cwd: invocation.cwd,
      };
    }
    break;
  }
  throw new CharterError(
    "RUN_NOT_RESUMABLE",
    `workflow run ${runId} records no invocation to continue from`,
    {
      details: { runId, reason: "no_invocation" },
    },
  );
}
