import type { ProtocolAdapterResult } from "../contract/protocol-adapter-result.js";
import type { ModelErrorClass } from "../model/model-call-error.js";
import type { ModelUsage } from "../model/model-client.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";

/** A preflight finding (seed 002 Phase 2b preflight checks). */
export interface PreflightProblem {
  readonly check: "context_feasibility" | "tool_availability" | "model_targets" | "tool_servers" | "contract";
  readonly detail: string;
}

/** What one model attempt produced: a response the adapter judged, or a classified failure. */
export interface AttemptRecord {
  readonly targetIndex: number;
  readonly provider: string;
  readonly model: string;
  readonly latencyMs: number;
  readonly usage: ModelUsage | null;
  /**
   * The canonical hash of the request (the `infer` effect's `requestHash`), recorded as the INFER entry's
   * `request_hash`; null only when replaying a record written before requests were hashed (no such key then).
   */
  readonly requestHash: string | null;
  readonly rawRequestHash: string | null;
  readonly rawResponseHash: string | null;
  readonly adapterResult: ProtocolAdapterResult | null;
  readonly failure: {
    readonly errorClass: ModelErrorClass;
    readonly code: string;
    readonly message: string;
    readonly statusCode: number | null;
    readonly retryAfterMs: number | null;
    /** For a connection that got no HTTP answer: the URL tried and the system error (`ECONNREFUSED 127.0.0.1:9`). */
    readonly url?: string;
    readonly networkCause?: string;
  } | null;
  readonly txnId: string;
}

/** Which timeout the driver saw fire while the effect ran (its timers abort in-flight calls). */
export type ObservedTimeout = "total" | "step" | null;

/**
 * Events fed to the transition function. Each carries the clock reading, the interrupt flag and any timeout
 * observed while it happened, so the transition itself never reads a clock or a timer.
 */
export type SessionEvent =
  | {
      readonly type: "precheck_completed";
      readonly now: number;
      readonly interrupted: boolean;
      readonly timedOut: ObservedTimeout;
      readonly problems: readonly PreflightProblem[];
    }
  | {
      readonly type: "inference_completed";
      readonly now: number;
      readonly interrupted: boolean;
      readonly timedOut: ObservedTimeout;
      readonly attempt: AttemptRecord;
    }
  | {
      readonly type: "tools_completed";
      readonly now: number;
      readonly interrupted: boolean;
      readonly timedOut: ObservedTimeout;
      readonly results: readonly ToolExecutionResult[];
      /** Calls that were not executed because they need an approval (the run stops for it). */
      readonly pendingApprovals?: readonly string[];
      /** Of those, the calls whose tool server asked the user a question, with the question. */
      readonly pendingQuestions?: readonly PendingQuestion[];
    };

/** A question a tool's server asked the user (MCP elicitation); the run stops until it is answered. */
export interface PendingQuestion {
  readonly call_id: string;
  readonly server: string;
  readonly message: string;
  readonly requested_schema: Readonly<Record<string, unknown>>;
}
