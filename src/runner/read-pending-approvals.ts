import type { PendingApproval } from "../session/pending-approval.js";
import type { RunStore } from "../store/run-store.js";

interface RecordedExecute {
  readonly action?: { readonly calls?: readonly { id: string; name: string; arguments: unknown }[] };
  readonly result?: {
    readonly pending_approvals?: readonly string[];
    readonly pending_questions?: readonly {
      call_id: string;
      server: string;
      message: string;
      requested_schema: Record<string, unknown>;
    }[];
  };
}

/**
 * The calls a run stopped for approval waits on, read from its stored transcript: the last EXECUTE entry's
 * `pending_approvals`, each with the call as that entry records it. The transcript, not the checkpoint, is the
 * source because it is redacted as every other place the user reads from is: what the user is shown never holds
 * a secret. Empty when the last EXECUTE waits on nothing.
 */
export async function readPendingApprovals(
  store: Pick<RunStore, "readEntries" | "latestCheckpoint">,
  runId: string,
): Promise<PendingApproval[]> {
  // A run stops for an approval in the EXECUTE right after its latest checkpoint (`before_execute`): reading from
  // there spares a long transcript's earlier entries.
  const checkpoint = (await store.latestCheckpoint(runId))?.document as { entry_count?: unknown } | undefined;
  const fromSeq = typeof checkpoint?.entry_count === "number" ? checkpoint.entry_count : 0;
  let last: { turn: number; recorded: RecordedExecute } | null = null;
  for await (const entry of store.readEntries(runId, { fromSeq })) {
    if (entry.state === "EXECUTE") last = { turn: entry.turn, recorded: entry as RecordedExecute };
  }
  if (last === null) return [];
  const calls = last.recorded.action?.calls ?? [];
  const pending: PendingApproval[] = [];
  for (const callId of last.recorded.result?.pending_approvals ?? []) {
    const call = calls.find((candidate) => candidate.id === callId);
    if (call === undefined) continue;
    const question = last.recorded.result?.pending_questions?.find(
      (candidate) => candidate.call_id === callId,
    );
    pending.push({
      turn: last.turn,
      callId,
      tool: call.name,
      arguments: call.arguments ?? null,
      ...(question === undefined
        ? {}
        : {
            question: {
              server: question.server,
              message: question.message,
              requestedSchema: question.requested_schema,
            },
          }),
    });
  }
  return pending;
}
