import { CharterError } from "../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { RunTotals } from "../store/run-record.js";
import type { RunStore } from "../store/run-store.js";
import { buildWorkflowResult, collectWorkflowErrors } from "./build-workflow-result.js";
import { renderTemplate, renderTemplateValue, type TemplateScope } from "./render-template.js";
import { type StepRunResult, stepResultFromStoredRun } from "./step-run-result.js";
import {
  parseWorkflowCheckpoint,
  type WorkflowCheckpoint,
  type WorkflowStepOutput,
  type WorkflowStepRecord,
} from "./workflow-checkpoint.js";
import type { JsonValue, WorkflowAction, WorkflowDefinition, WorkflowStep } from "./workflow-definition.js";
import type { WorkflowProgressEvent } from "./workflow-progress-event.js";
import type { WorkflowRecorder } from "./workflow-recorder.js";
import type { WorkflowError, WorkflowResult } from "./workflow-result.js";
import {
  initialSchedulerState,
  type SchedulerEvent,
  type SchedulerState,
  transitionScheduler,
} from "./workflow-scheduler.js";
import type { WorkflowStatus } from "./workflow-status.js";
import type { WorkflowStepExecutor } from "./workflow-step-executor.js";

export interface WorkflowExecutionOptions {
  readonly definition: WorkflowDefinition;
  readonly workflowRunId: string;
  readonly input: unknown;
  readonly store: RunStore;
  readonly recorder: WorkflowRecorder;
  readonly executor: WorkflowStepExecutor;
  readonly environment: RuntimeEnvironment;
  readonly signal?: AbortSignal;
  /** Resume from this checkpoint (the latest stored); without it the workflow starts. */
  readonly restored?: { readonly checkpoint: WorkflowCheckpoint; readonly seq: number };
  /** What the WORKFLOW_START entry records of how the workflow was started (file, configuration, directory). */
  readonly invocation?: unknown;
  readonly onProgress?: (event: WorkflowProgressEvent) => void;
}

/** A step's action (or compensation) that finished, waiting for the engine to record it. */
interface Completion {
  readonly stepId: string;
  readonly phase: "step" | "compensation";
  readonly result: StepRunResult;
}

const zeroTotals: RunTotals = { turns: 0, tokensIn: 0, tokensOut: 0, costUsd: 0, toolsUsed: [] };

function emptyRecord(): WorkflowStepRecord {
  return {
    status: "pending",
    runId: null,
    outcome: null,
    error: null,
    startedAt: null,
    endedAt: null,
    callId: null,
    compensation: null,
  };
}

function addTotals(total: RunTotals, more: RunTotals): RunTotals {
  return {
    turns: total.turns + more.turns,
    tokensIn: total.tokensIn + more.tokensIn,
    tokensOut: total.tokensOut + more.tokensOut,
    costUsd: total.costUsd + more.costUsd,
    toolsUsed: [...total.toolsUsed, ...more.toolsUsed.filter((tool) => !total.toolsUsed.includes(tool))],
  };
}

function errorOf(error: unknown): { code: string; message: string } {
  return CharterError.isInstance(error)
    ? { code: error.code, message: error.message }
    : { code: "INTERNAL_ERROR", message: error instanceof Error ? error.message : String(error) };
}

function failedResult(error: { code: string; message: string }, runId: string | null): StepRunResult {
  return {
    runId,
    status: "failed",
    outcome: null,
    report: "",
    error,
    contractHash: null,
    headHash: null,
    entryCount: 0,
    totals: zeroTotals,
  };
}

/**
 * The workflow engine: drives the pure scheduler (workflow-scheduler.ts) and performs its effects. Each batch of
 * what one event changed (a step's end, the starts and skips that follow) is stored in ONE transaction with a
 * checkpoint (workflow-recorder.ts) before anything it started runs, so a step's output is durable before any
 * step that reads it starts, and a step's run id is recorded before its run exists. Events are handled one at a
 * time, in the order steps finish; steps run concurrently up to `maxConcurrency`.
 *
 * On resume (`restored`), completed steps' outputs come from the checkpoint and never run again; each step that was
 * running continues: its stored run through the durable resume (or, when it ended before the workflow recorded it,
 * its stored result; when it never committed a turn, a new run); a tool step runs again only when its tool is
 * read-only or idempotent.
 */
export async function executeWorkflow(options: WorkflowExecutionOptions): Promise<WorkflowResult> {
  const { definition, recorder, executor, environment, store, workflowRunId } = options;
  const stepsById = new Map(definition.steps.map((step) => [step.id, step]));
  const stepIds = definition.steps.map((step) => step.id);
  const restored = options.restored?.checkpoint;
  const input = restored?.context.input ?? (options.input as JsonValue);
  let scheduler: SchedulerState =
    restored === undefined
      ? initialSchedulerState(definition)
      : {
          statuses: restored.scheduler.statuses,
          completionOrder: restored.scheduler.completionOrder,
          failing: restored.scheduler.failing,
          interrupted: false,
          compensationQueue: restored.scheduler.compensationQueue,
          status: null,
        };
  const records: Record<string, WorkflowStepRecord> = restored?.steps
    ? { ...restored.steps }
    : Object.fromEntries(definition.steps.map((step) => [step.id, emptyRecord()]));
  const outputs: Record<string, WorkflowStepOutput> = { ...(restored?.stepOutputs ?? {}) };
  const memory: Record<string, JsonValue> = {
    ...((restored?.context.memory ?? {}) as Record<string, JsonValue>),
  };
  let totals: RunTotals = restored?.totals ?? zeroTotals;
  let lastCompleted = { index: restored?.stepIndex ?? -1, id: restored?.completedStepId ?? null };
  const controllers = new Map<string, AbortController>();
  const cancelled = new Set<string>();
  const queue: Completion[] = [];
  let wake: (() => void) | null = null;
  const progress = options.onProgress ?? (() => undefined);

  const scope = (): TemplateScope => ({ input, outputs, memory });

  /** The checkpoint of where the workflow stands now, checked against its schema before it is saved. */
  function checkpoint(): WorkflowCheckpoint {
    return parseWorkflowCheckpoint(currentCheckpoint(), stepIds, { runId: workflowRunId, seq: null });
  }

  function currentCheckpoint(): WorkflowCheckpoint {
    return {
      v: 1,
      kind: "workflow",
      stepIndex: lastCompleted.index,
      completedStepId: lastCompleted.id,
      stepOutputs: { ...outputs },
      context: { input, memory: { ...memory } },
      memorySnapshot: { ...memory },
      scheduler: {
        statuses: { ...scheduler.statuses },
        completionOrder: [...scheduler.completionOrder],
        failing: scheduler.failing,
        compensationQueue: scheduler.compensationQueue === null ? null : [...scheduler.compensationQueue],
      },
      steps: { ...records },
      totals: { ...totals, toolsUsed: [...totals.toolsUsed] },
    };
  }

  function enqueue(completion: Completion): void {
    queue.push(completion);
    wake?.();
  }

  /** Runs an action in the background; its end is queued for the engine (never a rejection). */
  function launch(
    stepId: string,
    phase: Completion["phase"],
    run: (signal: AbortSignal) => Promise<StepRunResult>,
  ) {
    const controller = new AbortController();
    const key = `${phase}:${stepId}`;
    controllers.set(key, controller);
    if (cancelled.has(stepId) || options.signal?.aborted === true) controller.abort();
    void run(controller.signal)
      .catch((error: unknown) => failedResult(errorOf(error), null))
      .then((result) => {
        controllers.delete(key);
        enqueue({ stepId, phase, result });
      });
  }

  // One listener on the caller's signal for every step (not one per step: a wide level would pass the listener
  // limit Node warns at): an interrupt stops every running step's run.
  const interruptSteps = () => {
    for (const controller of controllers.values()) controller.abort();
  };
  options.signal?.addEventListener("abort", interruptSteps, { once: true });

  /** What a step's action runs with: its prompt or arguments rendered from what its dependencies produced. */
  function render(action: WorkflowAction): { prompt: string } | { arguments: Record<string, unknown> } {
    return action.kind === "agent"
      ? { prompt: renderTemplate(action.prompt, scope()) }
      : { arguments: renderTemplateValue(action.arguments as JsonValue, scope()) as Record<string, unknown> };
  }

  function runner(
    action: WorkflowAction,
    rendered: { prompt: string } | { arguments: Record<string, unknown> },
    ids: { runId: string | null; callId: string | null },
    mode: "start" | "continue" | "stored" = "start",
  ): (signal: AbortSignal) => Promise<StepRunResult> {
    return async (signal) => {
      if (action.kind === "tool") {
        return executor.runTool({
          name: action.name,
          arguments: "arguments" in rendered ? rendered.arguments : {},
          callId: ids.callId as string,
          signal,
          mayHaveRun: mode !== "start",
        });
      }
      const runId = ids.runId as string;
      if (mode === "stored") {
        const run = await store.getRun(runId);
        if (run === null) return failedResult({ code: "RUN_NOT_FOUND", message: `no run ${runId}` }, runId);
        return stepResultFromStoredRun(run);
      }
      if (mode === "continue") return executor.continueAgent({ runId, signal });
      return executor.runAgent({
        agent: action.agent,
        prompt: "prompt" in rendered ? rendered.prompt : "",
        runId,
        signal,
      });
    };
  }

  /**
   * How a step that was running when the workflow stopped continues: its stored run's state decides (a run that
   * ended is taken as it ended; one with a committed turn resumes; one that never got that far starts again).
   */
  async function continuation(
    action: WorkflowAction,
    runId: string | null,
  ): Promise<{ mode: "start" | "continue" | "stored"; runId: string | null }> {
    if (action.kind === "tool" || runId === null) return { mode: "continue", runId };
    const run = await store.getRun(runId);
    if (run === null) return { mode: "start", runId };
    if (run.status === "completed" || run.status === "failed") return { mode: "stored", runId };
    if ((await store.latestCheckpoint(runId)) !== null) return { mode: "continue", runId };
    // It never committed a turn: nothing of it is lost by starting again, under a new run id (the old run stays).
    return { mode: "start", runId: environment.newId("run") };
  }

  /** Feeds one event to the scheduler, records what it decided with a checkpoint, then starts what it started. */
  async function handle(event: SchedulerEvent): Promise<void> {
    await handleAll([() => event]);
  }

  /**
   * Feeds events to the scheduler one after the other (each made just before its turn, so a completion is recorded
   * in the order it came), then commits ONE checkpoint for all of them before anything they started runs: the ends
   * of steps that finished together cost one transaction, not one each.
   */
  async function handleAll(events: readonly (() => SchedulerEvent)[]): Promise<void> {
    const launches: (() => void)[] = [];
    const failedAtStart: Completion[] = [];
    for (const nextEvent of events) apply(nextEvent(), launches, failedAtStart);
    await recorder.commit(checkpoint(), totals);
    for (const start of launches) start();
    for (const completion of failedAtStart) enqueue(completion);
  }

  function apply(event: SchedulerEvent, launches: (() => void)[], failedAtStart: Completion[]): void {
    const output = transitionScheduler(definition, scheduler, event);
    scheduler = output.state;
    const now = environment.now();
    for (const effect of output.effects) {
      if (effect.type === "skip_step") {
        records[effect.stepId] = { ...(records[effect.stepId] ?? emptyRecord()), status: "skipped" };
        recorder.append(
          "WORKFLOW_STEP_END",
          `step/${effect.stepId}/end`,
          { step: effect.stepId },
          {
            status: "skipped",
            reason: effect.reason,
          },
        );
        progress({ type: "step_skipped", stepId: effect.stepId, reason: effect.reason });
      } else if (effect.type === "cancel_step") {
        cancelled.add(effect.stepId);
        controllers.get(`step:${effect.stepId}`)?.abort();
      } else if (effect.type === "start_step" || effect.type === "compensate") {
        const phase = effect.type === "start_step" ? "step" : "compensation";
        const step = stepsById.get(effect.stepId) as WorkflowStep;
        const action = (phase === "step" ? step.action : step.compensate) as WorkflowAction;
        let rendered: ReturnType<typeof render>;
        try {
          rendered = render(action);
        } catch (error) {
          failedAtStart.push({ stepId: step.id, phase, result: failedResult(errorOf(error), null) });
          continue;
        }
        const ids = {
          runId: action.kind === "agent" ? environment.newId("run") : null,
          callId:
            action.kind === "tool"
              ? `${workflowRunId}/${step.id}${phase === "compensation" ? "/compensate" : ""}`
              : null,
        };
        const record = records[step.id] ?? emptyRecord();
        records[step.id] =
          phase === "step"
            ? { ...record, status: "running", runId: ids.runId, callId: ids.callId, startedAt: now }
            : {
                ...record,
                status: "compensating",
                compensation: { runId: ids.runId, callId: ids.callId, outcome: null, error: null },
              };
        recorder.append(
          phase === "step" ? "WORKFLOW_STEP_START" : "WORKFLOW_COMPENSATION_START",
          `step/${step.id}/${phase === "step" ? "start" : "compensation/start"}`,
          {
            step: step.id,
            index: step.index,
            ...describeAction(action, rendered),
            run_id: ids.runId,
            call_id: ids.callId,
          },
          null,
        );
        progress({
          type: phase === "step" ? "step_started" : "compensation_started",
          stepId: step.id,
          runId: ids.runId,
        });
        launches.push(() => launch(step.id, phase, runner(action, rendered, ids)));
      }
    }
  }

  /** Records a finished action: its entry, the step's record, output, memory and the totals. */
  function record(completion: Completion): SchedulerEvent {
    const { stepId, phase, result } = completion;
    const step = stepsById.get(stepId) as WorkflowStep;
    const previous = records[stepId] ?? emptyRecord();
    const now = environment.now();
    const stoppedBySignal = options.signal?.aborted === true;
    totals = addTotals(totals, result.totals);
    const details = {
      outcome: result.outcome,
      contract_hash: result.contractHash,
      chain_head: result.headHash,
      entry_count: result.entryCount,
      error: result.error,
      ...(result.toolResult !== undefined
        ? {
            tool_result: {
              status: result.toolResult.status,
              error_code: result.toolResult.error_code,
              content: result.toolResult.content,
            },
          }
        : {}),
    };
    if (phase === "compensation") {
      const status =
        result.status === "completed"
          ? "compensated"
          : result.status === "interrupted" || stoppedBySignal
            ? "interrupted"
            : "compensation_failed";
      records[stepId] = {
        ...previous,
        status: status === "interrupted" ? "compensating" : status,
        compensation: {
          runId: result.runId ?? previous.compensation?.runId ?? null,
          callId: previous.compensation?.callId ?? null,
          outcome: result.outcome,
          error: result.error,
        },
      };
      recorder.append(
        "WORKFLOW_COMPENSATION_END",
        `step/${stepId}/compensation/end`,
        {
          step: stepId,
          run_id: result.runId ?? previous.compensation?.runId ?? null,
        },
        { status, ...details },
      );
      progress({ type: "compensation_ended", stepId, status });
      return { type: "compensation_ended", stepId, status };
    }
    const status =
      result.status === "completed"
        ? "completed"
        : cancelled.has(stepId)
          ? "cancelled"
          : result.status === "interrupted" || stoppedBySignal
            ? "interrupted"
            : "failed";
    if (status === "completed") {
      outputs[stepId] = {
        report: result.report,
        ...(result.json !== undefined ? { json: result.json as JsonValue } : {}),
      };
      if (step.saveAs !== null) memory[step.saveAs] = (result.json as JsonValue | undefined) ?? result.report;
      lastCompleted = { index: step.index, id: stepId };
    }
    records[stepId] = {
      ...previous,
      status,
      runId: result.runId ?? previous.runId,
      outcome: result.outcome,
      error: status === "completed" ? null : result.error,
      startedAt: previous.startedAt ?? now,
      endedAt: now,
    };
    recorder.append(
      "WORKFLOW_STEP_END",
      `step/${stepId}/end`,
      { step: stepId, run_id: result.runId ?? previous.runId },
      {
        status,
        ...details,
        report: status === "completed" ? result.report : null,
        duration_ms: now - (previous.startedAt ?? now),
      },
    );
    progress({
      type: "step_ended",
      stepId,
      status,
      runId: result.runId ?? previous.runId,
      durationMs: now - (previous.startedAt ?? now),
    });
    return { type: "step_ended", stepId, status };
  }

  function nextCompletion(): Promise<Completion | null> {
    const ready = queue.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolveNext) => {
      const onAbort = () => {
        wake = null;
        resolveNext(null);
      };
      wake = () => {
        wake = null;
        options.signal?.removeEventListener("abort", onAbort);
        resolveNext(queue.shift() ?? null);
      };
      if (options.signal !== undefined && !scheduler.interrupted) {
        if (options.signal.aborted) onAbort();
        else options.signal.addEventListener("abort", onAbort, { once: true });
      }
    });
  }

  // The start: what the workflow is, or where it resumes from (and how each step that was running continues).
  if (restored === undefined) {
    recorder.append(
      "WORKFLOW_START",
      "workflow/start",
      {
        workflow: definition.id,
        invocation: options.invocation ?? null,
        input,
      },
      {
        steps: definition.steps.map((step) => step.id),
        max_concurrency: definition.maxConcurrency,
        failure_strategy: definition.failureStrategy,
      },
    );
  } else {
    const continuing: { step: string; phase: string; mode: string; run_id: string | null }[] = [];
    const resumedLaunches: (() => void)[] = [];
    for (const step of definition.steps) {
      const status = scheduler.statuses[step.id];
      const phase =
        status === "running" || status === "interrupted"
          ? "step"
          : status === "compensating"
            ? "compensation"
            : null;
      if (phase === null) continue;
      const action = (phase === "step" ? step.action : step.compensate) as WorkflowAction;
      const record = records[step.id] ?? emptyRecord();
      const previousRunId = phase === "step" ? record.runId : (record.compensation?.runId ?? null);
      const callId = phase === "step" ? record.callId : (record.compensation?.callId ?? null);
      const decided = await continuation(action, previousRunId);
      let rendered: ReturnType<typeof render>;
      try {
        rendered = action.kind === "tool" || decided.mode === "start" ? render(action) : { prompt: "" };
      } catch (error) {
        queue.push({ stepId: step.id, phase, result: failedResult(errorOf(error), previousRunId) });
        continue;
      }
      if (phase === "step") {
        // A step that was running while a failure stopped the workflow is cancelled, not continued.
        if (scheduler.failing) cancelled.add(step.id);
        records[step.id] = { ...record, status: "running", runId: decided.runId };
        scheduler = { ...scheduler, statuses: { ...scheduler.statuses, [step.id]: "running" } };
      } else {
        records[step.id] = {
          ...record,
          compensation: {
            ...(record.compensation ?? { outcome: null, error: null, callId }),
            runId: decided.runId,
            callId,
          },
        };
      }
      continuing.push({ step: step.id, phase, mode: decided.mode, run_id: decided.runId });
      recorder.append(
        phase === "step" ? "WORKFLOW_STEP_START" : "WORKFLOW_COMPENSATION_START",
        `step/${step.id}/${phase === "step" ? "start" : "compensation/start"}`,
        {
          step: step.id,
          index: step.index,
          ...describeAction(action, rendered),
          run_id: decided.runId,
          call_id: callId,
          continued: decided.mode,
        },
        null,
      );
      progress({
        type: phase === "step" ? "step_started" : "compensation_started",
        stepId: step.id,
        runId: decided.runId,
        continued: true,
      });
      resumedLaunches.push(() =>
        launch(step.id, phase, runner(action, rendered, { runId: decided.runId, callId }, decided.mode)),
      );
    }
    recorder.append(
      "WORKFLOW_RESUME",
      "workflow/resume",
      {
        from_checkpoint_seq: options.restored?.seq ?? null,
        resume_from_step_index: (restored.stepIndex ?? -1) + 1,
      },
      {
        completed: scheduler.completionOrder,
        continuing,
      },
    );
    await recorder.commit(checkpoint(), totals);
    for (const start of resumedLaunches) start();
  }

  await handle({ type: "start" });
  while (scheduler.status === null) {
    if (options.signal?.aborted === true && !scheduler.interrupted) {
      await handle({ type: "interrupt" });
      continue;
    }
    const completion = await nextCompletion();
    if (completion === null) continue;
    // Every completion already waiting joins this one's checkpoint.
    const arrived = [completion, ...queue.splice(0)];
    await handleAll(arrived.map((each) => () => record(each)));
  }

  options.signal?.removeEventListener("abort", interruptSteps);
  let status: WorkflowStatus = scheduler.status;
  const standing = () => ({ statuses: scheduler.statuses, records, outputs, totals });
  const errors: WorkflowError[] = collectWorkflowErrors(definition, standing());
  let output: JsonValue | null = null;
  if (status === "completed" && definition.output !== null) {
    try {
      output = renderTemplateValue(definition.output, scope());
    } catch (error) {
      status = "failed";
      errors.push({ stepId: null, phase: "output", ...errorOf(error) });
    }
  }
  recorder.append(
    "WORKFLOW_END",
    "workflow/end",
    { workflow: definition.id },
    { status, errors, output, totals },
  );
  await recorder.finish({
    status: status === "completed" ? "completed" : status === "interrupted" ? "interrupted" : "failed",
    outcome: status,
    errorCode: status === "interrupted" ? "INTERRUPTED" : (errors[0]?.code ?? null),
    finalReport: { output },
    totals,
  });
  progress({ type: "workflow_ended", status });
  return buildWorkflowResult(definition, standing(), {
    workflowRunId,
    status,
    errors,
    output,
    headHash: recorder.headHash,
    entries: recorder.entryCount,
  });
}

/** What a step's start entry records of its action: the agent and its rendered prompt, or the tool and arguments. */
function describeAction(
  action: WorkflowAction,
  rendered: { prompt: string } | { arguments: Record<string, unknown> },
): Record<string, unknown> {
  return action.kind === "agent"
    ? { kind: "agent", agent: action.agent, ...("prompt" in rendered ? { prompt: rendered.prompt } : {}) }
    : {
        kind: "tool",
        tool: action.name,
        ...("arguments" in rendered ? { arguments: rendered.arguments } : {}),
      };
}
