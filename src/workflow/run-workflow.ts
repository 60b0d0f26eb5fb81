import { homedir } from "node:os";
import { resolve } from "node:path";
import { createAgentCatalog } from "../agents/create-agent-catalog.js";
import { type ConfigurationOverlay, loadConfiguration } from "../config/load-configuration.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import type { AgentCatalog } from "../runner/agent-catalog.js";
import type { ModelCallBudget } from "../runner/model-call-budget.js";
import { currentRunOwner, defaultHeartbeatIntervalMilliseconds } from "../runner/run-owner.js";
import { selectRunStore } from "../runner/select-run-store.js";
import type { RunToolPermissions } from "../runner/tool-permissions.js";
import { openRunStore } from "../store/open-run-store.js";
import { checkWorkflowAgents } from "./check-workflow-agents.js";
import { createWorkflowStepExecutor } from "./create-workflow-step-executor.js";
import { executeWorkflow } from "./execute-workflow.js";
import { loadWorkflowFile, workflowFileInvalid } from "./load-workflow-file.js";
import { validateWorkflowInput } from "./validate-workflow-input.js";
import { buildWorkflowContract } from "./workflow-contract.js";
import type { WorkflowProgressEvent } from "./workflow-progress-event.js";
import { createWorkflowRecorder } from "./workflow-recorder.js";
import type { WorkflowResult } from "./workflow-result.js";

export interface RunWorkflowOptions {
  /** The workflow file (`*.workflow.yaml`, `.yml` or `.json`). */
  readonly workflowPath: string;
  /** The workflow's input, checked against its `input` schema before any step runs; default `{}`. */
  readonly input?: unknown;
  /** `--config FILE`: a configuration layer over those found from `cwd` and the workflow file's directory. */
  readonly configPath?: string;
  readonly cwd?: string;
  /** The run store (as for `runAgent`): every step's run is stored there too. */
  readonly store?: string;
  readonly runsDirectory?: string;
  readonly homeDirectory?: string;
  readonly etcDirectory?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  /** Who the workflow is for: recorded on its run and on every step's run. */
  readonly tenantId?: string;
  readonly correlationId?: string;
  readonly environment?: RuntimeEnvironment;
  /** Interrupts the workflow: running steps' runs end INTERRUPTED and the workflow is `interrupted`, resumable. */
  readonly signal?: AbortSignal;
  readonly onProgress?: (event: WorkflowProgressEvent) => void;
  /** The workflow run's id (a server gives the id it answered the request with); default a new one. */
  readonly runId?: string;
  /** The agent registry steps' registry ids are resolved in; default the configuration's. */
  readonly agentCatalog?: AgentCatalog;
  /**
   * A configuration layer over every other for each agent step's run (a server's tenant's providers and models);
   * not recorded: a resume is given it again.
   */
  readonly configurationOverlay?: ConfigurationOverlay;
  /**
   * What every agent step may do with tools (a server run: its caller's role; deletes always wait for a human).
   * Recorded with each step's run: a continued step keeps the permissions it started with.
   */
  readonly toolPermissions?: RunToolPermissions;
  /** Asked before every model call of every agent step (a server's tenant budgets). */
  readonly modelCallBudget?: ModelCallBudget;
}

/**
 * Runs a workflow file: checks the file, the input and that every step's agent resolves (WORKFLOW_FILE_INVALID,
 * WORKFLOW_INPUT_INVALID are thrown before anything is stored or run), stores a workflow run (kind `workflow`) with its own hash-chained transcript
 * and a checkpoint at each step's start and end, and runs its steps, each agent step a full run whose parent is
 * the workflow run. Returns the result whatever the steps did; only a failure to load or store throws.
 */
export async function runWorkflow(options: RunWorkflowOptions): Promise<WorkflowResult> {
  const environment = options.environment ?? systemEnvironment;
  const cwd = options.cwd ?? process.cwd();
  const home = options.homeDirectory ?? homedir();
  const loaded = await loadWorkflowFile(resolve(cwd, options.workflowPath));
  const input = options.input ?? {};
  validateWorkflowInput(loaded.definition, input, loaded.path);
  const configPath = options.configPath !== undefined ? resolve(cwd, options.configPath) : null;
  const { configuration, secrets } = await loadConfiguration({
    ...(configPath !== null ? { configPath } : {}),
    cwd,
    promptDirectory: loaded.directory,
    homeDirectory: home,
    ...(options.etcDirectory !== undefined ? { etcDirectory: options.etcDirectory } : {}),
    ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
  });
  const redactor = new SecretRedactor();
  for (const secret of secrets) redactor.addSecret(secret.value, secret.label);
  // Every step's agent must resolve before anything is stored or run (a typo in a path, an unknown registry id).
  const agentCatalog = options.agentCatalog ?? createAgentCatalog();
  const agentProblems = await checkWorkflowAgents(loaded, { configuration, cwd }, agentCatalog);
  if (agentProblems.length > 0) throw workflowFileInvalid(loaded.path, agentProblems);
  const { url } = await selectRunStore({
    store: options.store,
    configured: configuration.store,
    homeDirectory: home,
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
  });
  // Every query of the workflow run (and of its steps' runs) is scoped by its tenant.
  const store = await openRunStore({ url, environment, tenantId: options.tenantId ?? null });
  const workflowRunId = options.runId ?? environment.newId("run");
  const owner = currentRunOwner();
  let heartbeat: ReturnType<typeof setInterval> | null = null;
  try {
    const contract = buildWorkflowContract(loaded, environment);
    const recorder = await createWorkflowRecorder({
      store,
      runId: workflowRunId,
      contract,
      redactor,
      environment,
      create: { tenantId: options.tenantId ?? null, correlationId: options.correlationId ?? null, owner },
    });
    heartbeat = setInterval(
      () => void store.heartbeatRun(workflowRunId, owner).catch(() => undefined),
      environment.heartbeatIntervalMilliseconds ?? defaultHeartbeatIntervalMilliseconds,
    );
    heartbeat.unref();
    const executor = createWorkflowStepExecutor({
      workflowRunId,
      workflowDirectory: loaded.directory,
      storeUrl: url,
      configuration,
      configPath,
      cwd,
      ...(options.runsDirectory !== undefined ? { runsDirectory: options.runsDirectory } : {}),
      ...(options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {}),
      ...(options.etcDirectory !== undefined ? { etcDirectory: options.etcDirectory } : {}),
      ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
      ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
      tenantId: options.tenantId ?? null,
      correlationId: options.correlationId ?? null,
      environment,
      redactor,
      agentCatalog,
      ...(options.configurationOverlay !== undefined
        ? { configurationOverlay: options.configurationOverlay }
        : {}),
      ...(options.toolPermissions !== undefined ? { toolPermissions: options.toolPermissions } : {}),
      ...(options.modelCallBudget !== undefined ? { modelCallBudget: options.modelCallBudget } : {}),
    });
    return await executeWorkflow({
      definition: loaded.definition,
      workflowRunId,
      input,
      store,
      recorder,
      executor,
      environment,
      invocation: { workflow_file: loaded.path, config_path: configPath, cwd },
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
    });
  } finally {
    if (heartbeat !== null) clearInterval(heartbeat);
    await store.close();
  }
}
