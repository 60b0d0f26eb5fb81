import type { AgentOutcome } from "../contract/agent-outcome.js";
import type { FinalReport } from "./final-report.js";
import type { SessionError } from "./session-state.js";

/**
 * The typed event stream of a run, for library users, the CLI and (later) the server. Every event except the
 * two deltas is derived from a state transition (derive-charter-events.ts); deltas come from the model stream
 * of the INFER effect in flight.
 */
export type CharterEvent =
  | {
      readonly type: "turn_started";
      readonly runId: string;
      readonly turn: number;
      readonly maxTurns: number;
    }
  | {
      readonly type: "model_attempt_started";
      readonly runId: string;
      readonly turn: number;
      readonly attempt: number;
      readonly provider: string;
      readonly model: string;
      readonly forcedFinalTurn: boolean;
    }
  | {
      readonly type: "model_attempt_ended";
      readonly runId: string;
      readonly turn: number;
      readonly attempt: number;
      readonly provider: string;
      readonly model: string;
      readonly status: "ok" | "failed";
      readonly errorCode: string | null;
      readonly latencyMs: number;
      readonly tokens: { readonly input: number; readonly output: number };
      readonly costUsd: number | null;
    }
  | { readonly type: "text_delta"; readonly runId: string; readonly turn: number; readonly text: string }
  | { readonly type: "reasoning_delta"; readonly runId: string; readonly turn: number; readonly text: string }
  | {
      readonly type: "tool_call_started";
      readonly runId: string;
      readonly turn: number;
      readonly callId: string;
      readonly name: string;
      readonly arguments: Readonly<Record<string, unknown>>;
    }
  | {
      readonly type: "tool_call_ended";
      readonly runId: string;
      readonly turn: number;
      readonly callId: string;
      readonly name: string;
      readonly status: "ok" | "failed";
      readonly errorCode: string | null;
      readonly latencyMs: number;
      /** Whether the read-only tool cache answered the call; null for a tool that is never cached. */
      readonly cacheHit: boolean | null;
      /** The size of the call's result, in characters (never its text). */
      readonly resultCharacters: number;
    }
  | {
      readonly type: "context_guard_fired";
      readonly runId: string;
      readonly turn: number;
      readonly reason: string;
    }
  | { readonly type: "final_report"; readonly runId: string; readonly report: FinalReport }
  | {
      readonly type: "outcome";
      readonly runId: string;
      readonly outcome: AgentOutcome;
      readonly success: boolean;
      readonly error: SessionError | null;
      readonly turns: number;
    };

export type CharterEventType = CharterEvent["type"];
