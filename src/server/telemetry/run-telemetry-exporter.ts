import type { SecretRedactor } from "../../foundation/secret-redactor.js";
import type { RunRouting } from "../../runner/run-agent-options.js";
import type { AIAgentResult } from "../../session/agent-result.js";
import type { CharterEvent } from "../../session/charter-event.js";
import type { RunRequest } from "../execution/run-request.js";

/** Which execution of a run this is: its start, a continuation after a human's decision, or a takeover. */
export type RunExecutionKind = "start" | "decision" | "takeover";

/** How one execution of a run ended, as the worker that executed it saw it. */
export interface RunExecutionEnding {
  /** `completed`, `failed`, `awaiting_approval`, `suspended` (continued elsewhere), or `error` (the store failed). */
  readonly status: string;
  /** The run's result; null when nothing ran (cancelled while queued, say) or the execution threw. */
  readonly result: AIAgentResult | null;
  /** True when this execution recorded the run's last lifecycle event (COMPLETED or FAILED). */
  readonly recordedEnd: boolean;
  /** What was thrown, when the execution failed outside the run (the run store could not record). */
  readonly error?: unknown;
}

/** The telemetry of one execution of a run: told what the runner tells the server, then how it ended. */
export interface RunExecutionTelemetry {
  /** The run's own secret redactor, once the runner has made it: every later attribute passes it. */
  secretRedactor(redactor: SecretRedactor): void;
  routed(routing: RunRouting): void;
  event(event: CharterEvent): void;
  end(ending: RunExecutionEnding): void;
}

/**
 * Where a server process sends its runs' traces and metrics. Made only when an OTLP endpoint is configured; the
 * run execution (and the core below it) knows only this interface, never OpenTelemetry.
 */
export interface RunTelemetryExporter {
  /** Starts the telemetry of one execution of a run (a span from now until `end`). */
  startExecution(request: RunRequest, kind: RunExecutionKind): RunExecutionTelemetry;
  /** Sends everything recorded so far and stops (graceful shutdown, after the runs have drained). */
  shutdown(): Promise<void>;
}
