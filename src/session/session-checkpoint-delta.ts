import { CharterError } from "../foundation/charter-error.js";
import { type SessionCheckpoint, sessionCheckpointVersion } from "./session-checkpoint.js";

/**
 * A checkpoint stored as what changed since an earlier checkpoint of the same run (format v2), instead of
 * the whole state (v1). The conversation and the accounting only ever grow between two checkpoints of a run,
 * and they are most of a checkpoint's bytes: a whole-state checkpoint at turn t costs O(t) to encode and
 * write, so a run's checkpoints cost O(t^2) in all. A delta keeps the messages and accounting entries added
 * since its base and every other member in full, so each checkpoint costs what its turn added.
 *
 * Reading one back needs its base, and the base's base, down to a whole (v1) checkpoint: `baseSeq` names
 * where each link's base is stored.
 */
export const sessionCheckpointDeltaVersion = 2;

export interface SessionCheckpointDelta extends Omit<SessionCheckpoint, "v" | "state"> {
  readonly v: typeof sessionCheckpointDeltaVersion;
  /** Where the base checkpoint is stored (the seq of the entry it covers). */
  readonly base_seq: number;
  /** The base's conversation length: `state.conversation` holds only the messages after it. */
  readonly conversation_from: number;
  /** The base's accounting length: `state.accounting` holds only the entries after it. */
  readonly accounting_from: number;
  readonly state: SessionCheckpoint["state"];
}

/**
 * The delta from `base` to `next`, or null when `next` does not extend `base` (its conversation or accounting
 * does not start with the base's, as after a context compaction): then `next` must be stored whole.
 * States share their unchanged arrays' members, so "starts with" is checked by identity, in O(length).
 */
export function deltaSessionCheckpoint(
  base: SessionCheckpoint,
  baseSeq: number,
  next: SessionCheckpoint,
): SessionCheckpointDelta | null {
  if (base.run_id !== next.run_id) return null;
  const conversationFrom = base.state.conversation.length;
  const accountingFrom = base.state.accounting.length;
  if (!startsWith(next.state.conversation, base.state.conversation)) return null;
  if (!startsWith(next.state.accounting, base.state.accounting)) return null;
  return {
    ...next,
    v: sessionCheckpointDeltaVersion,
    base_seq: baseSeq,
    conversation_from: conversationFrom,
    accounting_from: accountingFrom,
    state: {
      ...next.state,
      conversation: next.state.conversation.slice(conversationFrom),
      accounting: next.state.accounting.slice(accountingFrom),
    },
  };
}

/** The whole checkpoint a delta stands for, given its base (itself whole). */
export function applySessionCheckpointDelta(
  base: SessionCheckpoint,
  delta: SessionCheckpointDelta,
): SessionCheckpoint {
  if (
    base.run_id !== delta.run_id ||
    base.state.conversation.length !== delta.conversation_from ||
    base.state.accounting.length !== delta.accounting_from
  ) {
    throw new CharterError("RUN_NOT_RESUMABLE", "a stored checkpoint delta does not continue its base", {
      details: {
        reason: "checkpoint_delta_mismatch",
        runId: delta.run_id,
        baseSeq: delta.base_seq,
        conversationFrom: delta.conversation_from,
        baseConversation: base.state.conversation.length,
        accountingFrom: delta.accounting_from,
        baseAccounting: base.state.accounting.length,
      },
    });
  }
  const { base_seq: _baseSeq, conversation_from: _from, accounting_from: _accounting, ...rest } = delta;
  return {
    ...rest,
    v: sessionCheckpointVersion,
    state: {
      ...delta.state,
      conversation: [...base.state.conversation, ...delta.state.conversation],
      accounting: [...base.state.accounting, ...delta.state.accounting],
    },
  };
}

export function isSessionCheckpointDelta(document: {
  readonly v: number;
}): document is SessionCheckpointDelta {
  return document.v === sessionCheckpointDeltaVersion;
}

function startsWith<T>(items: readonly T[], prefix: readonly T[]): boolean {
  if (items.length < prefix.length) return false;
  for (let index = 0; index < prefix.length; index++) if (items[index] !== prefix[index]) return false;
  return true;
}
