import { CharterError } from "../foundation/charter-error.js";
import { checkpointRecordHash } from "../store/bound-records.js";
import type { RunStore } from "../store/run-store.js";
import { verifyStoredRun } from "../store/verify-stored-run.js";
import type { TranscriptEntry } from "../transcript/transcript-entry.js";
import type { VerificationFailure, VerificationReport } from "../transcript/verification-report.js";

/** One step's run (or compensation's), verified on its own. */
export interface ChildRunVerification extends VerificationReport {
  readonly runId: string;
  readonly stepId: string;
}

export interface WorkflowVerificationReport extends VerificationReport {
  /** Every run the workflow started (its steps' and compensations'), each verified as `charter verify` would. */
  readonly children: readonly ChildRunVerification[];
}

interface EndEntry {
  readonly stepId: string;
  readonly runId: string;
  readonly contractHash: string | null;
  readonly chainHead: string | null;
  readonly entryCount: number;
  readonly entry: TranscriptEntry;
}

/**
 * `charter verify <workflow-run-id>`: the workflow's own chain exactly as any stored run's (header, contract hash,
 * every line, raw payloads), then what it binds: every stored checkpoint is the one a WORKFLOW_CHECKPOINT entry
 * names by content hash (none missing, none added), the run row's outcome is the WORKFLOW_END entry's status, and
 * every step run the chain recorded as ended exists, names the workflow as its parent, has the contract hash
 * recorded and held, at the recorded length, the recorded chain head. Then each run the workflow started is
 * verified on its own. The first fault found is reported; `children` lists each run's own verdict.
 */
export async function verifyWorkflowRun(store: RunStore, runId: string): Promise<WorkflowVerificationReport> {
  const run = await store.getRun(runId);
  if (run === null) {
    throw new CharterError("RUN_NOT_FOUND", `no stored run ${JSON.stringify(runId)}`, { details: { runId } });
  }
  const own = await verifyStoredRun(store, runId);
  if (!own.ok) return { ...own, children: [] };
  const failed = (failure: VerificationFailure, children: ChildRunVerification[] = []) => ({
    ...own,
    ok: false,
    first_bad_entry: failure,
    children,
  });

  const checkpointEntries = new Map<number, { hash: string; entry: TranscriptEntry }>();
  const ends: EndEntry[] = [];
  const started = new Map<string, string>();
  let last: TranscriptEntry | null = null;
  for await (const entry of store.readEntries(runId)) {
    last = entry;
    const action = (entry.action ?? {}) as { step?: string; run_id?: string | null };
    const result = (entry.result ?? {}) as {
      checkpoint_hash?: string;
      contract_hash?: string | null;
      chain_head?: string | null;
      entry_count?: number;
    };
    if (entry.state === "WORKFLOW_CHECKPOINT" && typeof result.checkpoint_hash === "string") {
      checkpointEntries.set(entry.seq, { hash: result.checkpoint_hash, entry });
    } else if (
      (entry.state === "WORKFLOW_STEP_START" || entry.state === "WORKFLOW_COMPENSATION_START") &&
      typeof action.run_id === "string"
    ) {
      started.set(action.run_id, action.step ?? "");
    } else if (
      (entry.state === "WORKFLOW_STEP_END" || entry.state === "WORKFLOW_COMPENSATION_END") &&
      typeof action.run_id === "string" &&
      (result.entry_count ?? 0) > 0
    ) {
      ends.push({
        stepId: action.step ?? "",
        runId: action.run_id,
        contractHash: result.contract_hash ?? null,
        chainHead: result.chain_head ?? null,
        entryCount: result.entry_count ?? 0,
        entry,
      });
    }
  }

  const stored = await store.readCheckpoints(runId);
  const storedSeqs = new Set<number>();
  for (const checkpoint of stored) {
    storedSeqs.add(checkpoint.seq);
    const bound = checkpointEntries.get(checkpoint.seq);
    if (bound === undefined || checkpointRecordHash(checkpoint.document) !== bound.hash) {
      return failed(
        mismatch(
          `checkpoint ${checkpoint.seq}`,
          checkpoint.seq,
          bound === undefined
            ? `the checkpoint covering entry ${checkpoint.seq} is bound by no WORKFLOW_CHECKPOINT entry`
            : `the checkpoint covering entry ${checkpoint.seq} is not the one its WORKFLOW_CHECKPOINT entry names`,
        ),
      );
    }
  }
  for (const [seq] of checkpointEntries) {
    if (!storedSeqs.has(seq)) {
      return failed(
        mismatch(
          `checkpoint ${seq}`,
          seq,
          `the checkpoint WORKFLOW_CHECKPOINT entry ${seq} names is missing`,
        ),
      );
    }
  }
  if (run.status !== "running") {
    const ended = last?.state === "WORKFLOW_END" ? (last.result as { status?: string }).status : undefined;
    if (ended === undefined || ended !== run.outcome) {
      return failed(
        mismatch(
          "run status",
          last?.seq ?? null,
          `the run row says ${run.status} (${run.outcome ?? "no outcome"}) but its chain ${
            ended === undefined ? "does not end with a WORKFLOW_END entry" : `ends with status ${ended}`
          }`,
        ),
      );
    }
  }

  const children: ChildRunVerification[] = [];
  let firstFault: VerificationFailure | null = null;
  for (const end of ends) {
    const child = await store.getRun(end.runId);
    const problem =
      child === null
        ? `step ${end.stepId}: its run ${end.runId} is not in the store`
        : child.parentRunId !== runId
          ? `step ${end.stepId}: run ${end.runId} names ${child.parentRunId ?? "no run"} as its parent, not this workflow run`
          : child.contractHash !== end.contractHash
            ? `step ${end.stepId}: run ${end.runId} has contract hash ${child.contractHash}, the workflow recorded ${end.contractHash}`
            : (await entryHash(store, end.runId, end.entryCount - 1)) !== end.chainHead
              ? `step ${end.stepId}: run ${end.runId} does not hold the chain head the workflow recorded at entry ${end.entryCount - 1}`
              : null;
    if (problem !== null) {
      firstFault ??= {
        ...mismatch(`step ${end.stepId} run ${end.runId}`, end.entry.seq, problem),
        step_id: end.entry.step_id,
      };
    }
  }
  for (const [childRunId, stepId] of started) {
    if ((await store.getRun(childRunId)) === null) continue; // a run that never got stored (the process died first)
    const report = await verifyStoredRun(store, childRunId);
    children.push({ ...report, runId: childRunId, stepId });
    if (!report.ok && firstFault === null) {
      firstFault = mismatch(
        `step ${stepId} run ${childRunId}`,
        null,
        `step ${stepId}: run ${childRunId} does not verify (${report.first_bad_entry?.reason_code}: ${report.first_bad_entry?.detail})`,
      );
    }
  }
  return firstFault === null ? { ...own, children } : failed(firstFault, children);
}

async function entryHash(store: RunStore, runId: string, seq: number): Promise<string | null> {
  if (seq < 0) return null;
  for await (const entry of store.readEntries(runId, { fromSeq: seq })) return entry.hash;
  return null;
}

function mismatch(record: string, seq: number | null, detail: string): VerificationFailure {
  return { seq, step_id: null, reason_code: "RECORD_MISMATCH", detail, record };
}
