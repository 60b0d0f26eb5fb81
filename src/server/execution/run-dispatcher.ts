import type { RunEventHub } from "./run-event-hub.js";
import type { RunDecisionRequest, RunRequest } from "./run-request.js";

/**
 * Where the HTTP API hands runs to be executed: in process (SQLite, or PostgreSQL with `--workers N`) or through
 * the pg-boss queue to any `charter worker`. The API never executes a run itself, so one interface serves both.
 */
export interface RunDispatcher {
  /** Resolves once the request is durably accepted (stored and queued), not when the run finishes. */
  dispatch(request: RunRequest): Promise<void>;
  /** Continues a run stopped for approval with a human's decisions; resolves once the decision is queued. */
  decide(request: RunDecisionRequest): Promise<void>;
  /** Asks the run to stop at its next checkpoint; false when the tenant has no such unfinished run. */
  cancel(tenantId: string, runId: string): Promise<boolean>;
  /** Resolves when the run has reached a final or stopped state (used by `wait: true`), or the signal aborts. */
  whenSettled(tenantId: string, runId: string, signal: AbortSignal): Promise<void>;
  /**
   * The hub this process's runs publish their lifecycle events to: a live event stream hears them at once instead
   * of polling the store (events of runs executed elsewhere are still found by reading the store).
   */
  readonly events?: RunEventHub;
  /** Stops taking runs and lets running turns reach their next checkpoint (SIGTERM). */
  drain(): Promise<void>;
}
