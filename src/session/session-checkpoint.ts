import type { SessionState } from "./session-state.js";
import type { TransitionOutput } from "./transition-output.js";

/**
 * A checkpoint: the whole session state at a COMMIT (or just before EXECUTE), as plain JSON, versioned.
 * Everything needed to resume without the process that wrote it (seed 003 INV-CP-001): the step (turn and the
 * COMMIT entry's seq), the conversation (which holds every step's outputs), the counters and the context.
 */
export const sessionCheckpointVersion = 1;

export type CheckpointKind = "commit" | "before_execute";

export interface SessionCheckpoint {
  readonly v: typeof sessionCheckpointVersion;
  readonly kind: CheckpointKind;
  readonly run_id: string;
  readonly turn: number;
  /** The transcript position the checkpoint covers: entries [0, entry_count) and the chain head after them. */
  readonly entry_count: number;
  readonly head_hash: string;
  readonly state: SerializedSessionState;
}

/** SessionState with its Maps as entry lists, so that it is plain JSON. */
export type SerializedSessionState = Omit<
  SessionState,
  "rateLimitedUntil" | "plannedToolMessages" | "conversationHash"
> & {
  readonly rateLimitedUntil: readonly (readonly [number, number])[];
  readonly plannedToolMessages: readonly (readonly [
    string,
    SessionState["plannedToolMessages"] extends ReadonlyMap<string, infer V> ? V : never,
  ])[];
};

/**
 * Whether the run checkpoints after this transition, and of which kind: before tools execute, or after a
 * COMMIT that continues to another inference. The driver and replay decide it the same way.
 */
export function checkpointKindAfter(output: TransitionOutput): CheckpointKind | null {
  if (output.effect.type === "execute_tools") return "before_execute";
  if (output.effect.type !== "infer") return null;
  return output.entries.some(
    (entry) => entry.state === "COMMIT" && (entry.result as { next?: string }).next === "INFER",
  )
    ? "commit"
    : null;
}

export function createSessionCheckpoint(
  state: SessionState,
  kind: CheckpointKind,
  position: { readonly entryCount: number; readonly headHash: string },
): SessionCheckpoint {
  return {
    v: sessionCheckpointVersion,
    kind,
    run_id: state.runId,
    turn: state.turn,
    entry_count: position.entryCount,
    head_hash: position.headHash,
    state: {
      ...persistedState(state),
      rateLimitedUntil: [...state.rateLimitedUntil],
      plannedToolMessages: [...state.plannedToolMessages],
    },
  };
}

export function restoreSessionState(checkpoint: SessionCheckpoint): SessionState {
  const state = checkpoint.state;
  return {
    ...state,
    rateLimitedUntil: new Map(state.rateLimitedUntil),
    plannedToolMessages: new Map(state.plannedToolMessages),
  };
}

/** The state without what is derived from it (the conversation's running request hash): never persisted. */
function persistedState(state: SessionState): Omit<SessionState, "conversationHash"> {
  const { conversationHash: _derived, ...persisted } = state;
  return persisted;
}
