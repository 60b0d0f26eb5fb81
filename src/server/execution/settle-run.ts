import { CharterError } from "../../foundation/charter-error.js";
import type { ErrorCode } from "../../foundation/error-codes.js";
import type { RunRequestRecord } from "../../store/run-event-records.js";
import { settledRunEventTypes } from "../../store/run-event-records.js";
import type { RunStore } from "../../store/run-store.js";
import { failureClassOf } from "../failure-class.js";
import { appendRequestEvent } from "./append-request-event.js";
import { releaseWaitingWorkItem } from "./execute-work-item-request.js";
import type { RunExecutionContext } from "./run-execution-context.js";
import { type RunRequest, runRequestKindOf } from "./run-request.js";

/**
 * Ends the lifecycle of a cancelled run that no process executes (queued, waiting for an approval, or stopped by a
 * drain): FAILED with `cancelled: true`. Its run row, if any, is left as it stopped: the run is not continued. A
 * work item waiting for a person first gives its repository back (working tree restored, failure receipt).
 */
export async function recordCancelledRun(
  store: RunStore,
  record: RunRequestRecord,
  context: RunExecutionContext,
): Promise<void> {
  if (settledRunEventTypes.includes(record.state)) return;
  const request = record.request as RunRequest;
  if (runRequestKindOf(request) === "work-item" && record.state === "AWAITING_APPROVAL") {
    // A repository that cannot be given back now is recovered by the next item there once this process is gone.
    await releaseWaitingWorkItem(request, context).catch(() => undefined);
  }
  await appendRequestEvent(store, record.request as RunRequest, context, "FAILED", {
    cancelled: true,
    error: { code: "INTERRUPTED", class: null, message: "the run was cancelled" },
  });
}

/**
 * Records the end of a run whose process stored the run's end but died before its last lifecycle event: COMPLETED or
 * FAILED from the stored run (outcome, error, tokens), marked `recovered` (the per-call telemetry died with it).
 */
export async function recordStoppedRunEnd(
  store: RunStore,
  record: RunRequestRecord,
  context: Pick<RunExecutionContext, "events">,
): Promise<void> {
  const run = await store.getRun(record.runId);
  if (run === null || settledRunEventTypes.includes(record.state)) return;
  const completed = run.status === "completed";
  const code = run.errorCode as ErrorCode | null;
  await appendRequestEvent(store, record.request as RunRequest, context, completed ? "COMPLETED" : "FAILED", {
    outcome: run.outcome,
    recovered: true,
    token_usage: {
      prompt_tokens: run.totals.tokensIn,
      completion_tokens: run.totals.tokensOut,
      total_tokens: run.totals.tokensIn + run.totals.tokensOut,
    },
    final_state: completed ? "success" : "error",
    error: code === null ? null : { code, class: failureClassOf(code), message: null },
  });
}

/**
 * Refuses a decision for a run that does not wait for one (running, ended, cancelled): RUN_NOT_RESUMABLE with
 * `reason: not_awaiting_approval` and the run's state, which an API answers as a conflict.
 */
export function assertAwaitingApproval(record: RunRequestRecord): void {
  if (record.state === "AWAITING_APPROVAL") return;
  throw new CharterError(
    "RUN_NOT_RESUMABLE",
    `run ${record.runId} is not waiting for an approval (its lifecycle is at ${record.state})`,
    { details: { runId: record.runId, reason: "not_awaiting_approval", state: record.state } },
  );
}
