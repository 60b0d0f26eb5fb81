import { CharterError } from "../foundation/charter-error.js";
import type { SessionCheckpoint } from "../session/session-checkpoint.js";
import {
  applySessionCheckpointDelta,
  isSessionCheckpointDelta,
  type SessionCheckpointDelta,
} from "../session/session-checkpoint-delta.js";
import type { RunStore } from "../store/run-store.js";
import type { RunInvocation } from "./durable-run-hooks.js";

/** A stored run's checkpoint as the runner wrote it: the session's checkpoint and how the run was invoked. */
export type StoredSessionCheckpoint = SessionCheckpoint & { readonly invocation: RunInvocation };

/**
 * The run's latest checkpoint, whole: a delta (see session-checkpoint-delta.ts) is applied to its base, read
 * back link by link down to a whole checkpoint. Null before the run's first checkpoint. Throws
 * RUN_NOT_RESUMABLE when a base is missing or does not match its delta.
 */
export async function loadSessionCheckpoint(
  store: Pick<RunStore, "latestCheckpoint" | "readCheckpoint">,
  runId: string,
): Promise<StoredSessionCheckpoint | null> {
  const latest = await store.latestCheckpoint(runId);
  if (latest === null) return null;
  const deltas: SessionCheckpointDelta[] = [];
  let document = latest.document as unknown as SessionCheckpoint | SessionCheckpointDelta;
  let seq = latest.seq;
  while (isSessionCheckpointDelta(document)) {
    // A base is always an earlier checkpoint: a damaged link naming a later one (or itself) is refused, not
    // followed round a cycle forever.
    if (!(document.base_seq < seq)) {
      throw new CharterError(
        "RUN_NOT_RESUMABLE",
        `run ${runId} has a stored checkpoint delta whose base does not precede it`,
        {
          details: { runId, reason: "checkpoint_delta_mismatch", seq, baseSeq: document.base_seq },
        },
      );
    }
    seq = document.base_seq;
    deltas.push(document);
    const base = await store.readCheckpoint(runId, document.base_seq);
    if (base === null) {
      throw new CharterError(
        "RUN_NOT_RESUMABLE",
        `run ${runId} lacks the base of a stored checkpoint delta`,
        {
          details: { runId, reason: "checkpoint_base_missing", baseSeq: document.base_seq },
        },
      );
    }
    document = base.document as unknown as SessionCheckpoint | SessionCheckpointDelta;
  }
  let whole: SessionCheckpoint = document;
  for (let index = deltas.length - 1; index >= 0; index--)
    whole = applySessionCheckpointDelta(whole, deltas[index] as SessionCheckpointDelta);
  return whole as StoredSessionCheckpoint;
}
