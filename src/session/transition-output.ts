import type { SessionEffect } from "./session-effect.js";
import type { SessionState } from "./session-state.js";
import type { SessionStateName, TranscriptEntryInput } from "./transcript-sink.js";

/** What one transition produces: the next state, the one effect to perform next, and transcript entries. */
export interface TransitionOutput {
  readonly state: SessionState;
  readonly effect: SessionEffect;
  readonly entries: readonly TranscriptEntryInput[];
}

/** Collects the transcript entries of the pure phases one event walks through. */
export class EntryCollector {
  readonly entries: TranscriptEntryInput[] = [];

  add(
    state: SessionState,
    phase: SessionStateName,
    now: number,
    action: unknown,
    result: unknown,
    options: { stepSuffix?: string; modelFingerprint?: string | null } = {},
  ): void {
    const step = phase.toLowerCase() + (options.stepSuffix ?? "");
    this.entries.push({
      state: phase,
      step_id: `turn-${state.turn}/${step}`,
      turn: state.turn,
      timestamp: now,
      action,
      result,
      model_fingerprint: options.modelFingerprint ?? null,
    });
  }
}
