import type { UnsettledRunRequest } from "../../store/run-event-records.js";
import type { RunOwner } from "../../store/run-record.js";
import { continueRunRequest, executeRunRequest, type RunExecutionOutcome } from "./execute-run-request.js";
import {
  continueWorkItemRequest,
  executeWorkItemRequest,
  recordWorkItemEnd,
  recoverWorkItemRequest,
} from "./execute-work-item-request.js";
import { continueWorkflowRequest, executeWorkflowRequest } from "./execute-workflow-request.js";
import type { RunExecutionContext } from "./run-execution-context.js";
import { type RunDecisionRequest, type RunRequest, runRequestKindOf } from "./run-request.js";
import { recordCancelledRun, recordStoppedRunEnd } from "./settle-run.js";

/** One piece of work for a worker: a run to start, a decision to apply, or a run to take over. */
export type RunTask =
  | { readonly kind: "start"; readonly request: RunRequest }
  | { readonly kind: "decide"; readonly request: RunRequest; readonly decision: RunDecisionRequest }
  | { readonly kind: "takeover"; readonly request: RunRequest };

export interface RunWorkerPoolOptions {
  readonly context: RunExecutionContext;
  /** How many runs execute at once. */
  readonly concurrency: number;
  /**
   * How long a running run's owner may go without a heartbeat before another worker takes the run over. The runs
   * this pool executes say they are alive three times per lease (the context environment's heartbeat interval).
   */
  readonly leaseMilliseconds: number;
  /** This process as a run owner. */
  readonly owner: RunOwner;
  /** Told of what fails outside a run (the store refusing an event, say); the pool goes on. */
  readonly onError?: (error: unknown) => void;
}

interface Running {
  readonly controller: AbortController;
  readonly done: Promise<RunExecutionOutcome | null>;
}

/**
 * Executes a server's runs, at most `concurrency` at once: starts, decisions and takeovers alike, each with a signal
 * that a cancellation or a drain aborts (the run stops at its next checkpoint). Where the work comes from (an
 * in-process queue, pg-boss) is the dispatcher's; `sweep` finds the runs whose process is gone.
 */
export class RunWorkerPool {
  readonly #options: RunWorkerPoolOptions;
  readonly #running = new Map<string, Running>();
  #draining = false;

  constructor(options: RunWorkerPoolOptions) {
    this.#options = options;
  }

  /** Slots free for another run (none while draining). */
  get free(): number {
    return this.#draining ? 0 : Math.max(0, this.#options.concurrency - this.#running.size);
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Whether this process executes the run now. */
  isRunning(tenantId: string | null, runId: string): boolean {
    return this.#running.has(keyOf(tenantId, runId));
  }

  /**
   * Executes a task in a slot; resolves when it ends (never rejects). `onAccepted` is called once the run is stored
   * and under way, or once the task ended, whichever comes first: a queue may forget the task from then on.
   */
  run(task: RunTask, onAccepted?: () => void): Promise<RunExecutionOutcome | null> {
    const key = keyOf(task.request.tenantId, task.request.runId);
    const already = this.#running.get(key);
    if (already !== undefined) {
      onAccepted?.();
      return already.done;
    }
    const controller = new AbortController();
    let accepted = false;
    const accept = () => {
      if (accepted) return;
      accepted = true;
      onAccepted?.();
    };
    const { context } = this.#options;
    // One execution's spans and metrics, when this process exports telemetry.
    const telemetry = context.telemetry?.startExecution(
      task.request,
      task.kind === "decide" ? "decision" : task.kind,
    );
    const options = {
      signal: controller.signal,
      onExecuting: accept,
      ...(telemetry !== undefined ? { observer: telemetry } : {}),
    };
    const execute = (): Promise<RunExecutionOutcome> => {
      const kind = runRequestKindOf(task.request);
      // Workflow and work item runs start and continue by their own rules; a decision continues the step runs
      // (or the item's agent run) that wait on the decided calls.
      if (kind === "workflow") {
        return task.kind === "start"
          ? executeWorkflowRequest(task.request, context, options)
          : continueWorkflowRequest(
              task.request,
              context,
              options,
              task.kind === "decide" ? task.decision : undefined,
            );
      }
      if (kind === "work-item") {
        if (task.kind === "decide")
          return continueWorkItemRequest(task.request, context, options, task.decision);
        return task.kind === "start"
          ? executeWorkItemRequest(task.request, context, options)
          : recoverWorkItemRequest(task.request, context);
      }
      switch (task.kind) {
        case "start":
          return executeRunRequest(task.request, context, options);
        case "decide":
          return continueRunRequest(
            task.request,
            { kind: "decision", decision: task.decision },
            context,
            options,
          );
        case "takeover":
          return continueRunRequest(task.request, { kind: "takeover" }, context, options);
      }
    };
    const done = execute()
      .then((outcome) => {
        telemetry?.end({ ...outcome, recordedEnd: outcome.recordedEnd === true });
        return outcome;
      })
      .catch((error: unknown) => {
        telemetry?.end({ status: "error", result: null, recordedEnd: false, error });
        this.#options.onError?.(error);
        return null;
      })
      .finally(() => {
        this.#running.delete(key);
        accept();
      });
    this.#running.set(key, { controller, done });
    return done;
  }

  /** Stops a run this process executes at its next checkpoint; false when it executes no such run. */
  abort(tenantId: string | null, runId: string): boolean {
    const running = this.#running.get(keyOf(tenantId, runId));
    running?.controller.abort();
    return running !== undefined;
  }

  /** Aborts the local runs whose cancellation was asked for since they started (by any process). */
  async checkCancellations(): Promise<void> {
    for (const [key, running] of this.#running) {
      const [tenantId, runId] = JSON.parse(key) as [string | null, string];
      try {
        const request = await this.#options.context.store.forTenant(tenantId).getRunRequest(runId);
        if (request?.cancelRequestedAt != null) running.controller.abort();
      } catch (error) {
        this.#options.onError?.(error);
      }
    }
  }

  /**
   * Looks at every unsettled run of the store and returns the tasks that continue those nobody executes: runs whose
   * owner's heartbeat is older than the lease (taken over first, so that one worker only gets each), runs stopped by
   * a drain, and, with `startUnstarted`, runs accepted but never started (an in-process queue lost with its
   * process). A cancelled run nobody executes is recorded FAILED here, and a run that ended without its last event
   * gets it.
   */
  async sweep(options: { readonly startUnstarted: boolean }): Promise<RunTask[]> {
    const { context, leaseMilliseconds, owner } = this.#options;
    const tasks: RunTask[] = [];
    const now = context.environment.now();
    for (const unsettled of await context.store.listUnsettledRunRequests()) {
      if (this.isRunning(unsettled.tenantId, unsettled.runId)) continue;
      try {
        const task = await this.#continuationOf(unsettled, now - leaseMilliseconds, owner, options);
        if (task !== null) tasks.push(task);
      } catch (error) {
        this.#options.onError?.(error);
      }
    }
    return tasks;
  }

  async #continuationOf(
    unsettled: UnsettledRunRequest,
    heartbeatBefore: number,
    owner: RunOwner,
    options: { readonly startUnstarted: boolean },
  ): Promise<RunTask | null> {
    const store = this.#options.context.store.forTenant(unsettled.tenantId);
    const run = unsettled.run;
    // Decided from the listing first: most unsettled runs are running under a live owner and cost nothing more.
    const action =
      run === null
        ? options.startUnstarted
          ? "start"
          : null
        : run.status === "running"
          ? run.heartbeatAt !== null && run.heartbeatAt < heartbeatBefore
            ? "takeover"
            : null
          : unsettled.cancelRequestedAt !== null
            ? "cancelled"
            : run.status === "interrupted"
              ? // A workflow whose steps wait for a person stays stopped (its row is interrupted) until a decision.
                unsettled.state === "AWAITING_APPROVAL"
                ? null
                : "resume"
              : run.status === "completed" || run.status === "failed"
                ? "record_end"
                : null;
    if (action === null) return null;
    const record = await store.getRunRequest(unsettled.runId);
    if (record === null) return null;
    const request = record.request as RunRequest;
    switch (action) {
      case "start":
        return { kind: "start", request };
      case "takeover":
        // Whoever changes the owner first takes the run; the others find its heartbeat fresh.
        return (await store.takeOverRun(unsettled.runId, { owner, heartbeatBefore }))
          ? { kind: "takeover", request }
          : null;
      case "cancelled":
        await recordCancelledRun(store, record, this.#options.context);
        return null;
      case "resume":
        return { kind: "takeover", request };
      case "record_end":
        // A work item's agent run ends before the item does (admission, the test command): its receipt says when.
        if (runRequestKindOf(request) === "work-item") {
          await recordWorkItemEnd(store, request, this.#options.context);
          return null;
        }
        await recordStoppedRunEnd(store, record, this.#options.context);
        return null;
    }
  }

  /** Stops taking runs, stops the running ones at their next checkpoint, and resolves once they have stopped. */
  async drain(): Promise<void> {
    this.#draining = true;
    const running = [...this.#running.values()];
    for (const each of running) each.controller.abort();
    await Promise.all(running.map((each) => each.done));
  }

  /** Resolves once the runs under way have ended, without stopping them (tests, `wait`). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running.values()].map((each) => each.done));
  }
}

function keyOf(tenantId: string | null, runId: string): string {
  return JSON.stringify([tenantId, runId]);
}
