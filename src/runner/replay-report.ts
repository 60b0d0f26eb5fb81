import type { AgentOutcome } from "../contract/agent-outcome.js";
import type { NotReExecutedCall, ToolDivergence } from "./replay-tool-calls.js";

/** The first entry where a replay departs from its record, and why. */
export interface ReplayDivergence {
  readonly seq: number;
  readonly step_id: string;
  readonly reason:
    | "STATE_MISMATCH"
    | "ACTION_MISMATCH"
    | "RESULT_MISMATCH"
    | "CHAIN_MISMATCH"
    | "RECORD_ENDED"
    | "EXTRA_ENTRIES"
    | "REQUEST_MISMATCH";
  readonly detail: string;
  /**
   * REQUEST_MISMATCH: the request the replayed session built has no recorded answer. `recordedRequestHash` is the
   * request hash of the record's entry at that point (null when it has none for the call), `replayedRequestHash`
   * the replay's; `callId` names the tool call when the request is a tool call's.
   */
  readonly details?: {
    readonly recordedRequestHash: string | null;
    readonly replayedRequestHash: string;
    readonly callId?: string;
  };
}

export interface ReplayReport {
  readonly ok: boolean;
  readonly outcome: AgentOutcome | null;
  readonly recordedOutcome: AgentOutcome | null;
  readonly headHash: string;
  readonly recordedHeadHash: string | null;
  readonly entries: number;
  readonly divergence: ReplayDivergence | null;
  /** With live tools: every call whose live result differs from the recorded one. */
  readonly toolDivergences: readonly ToolDivergence[];
  /** With live tools: the calls executed again. */
  readonly reExecuted: readonly string[];
  /** With live tools: the calls answered from the record instead, and why. */
  readonly notReExecuted: readonly NotReExecutedCall[];
}
