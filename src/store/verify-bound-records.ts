import type { RunIdentity } from "../session/session-context.js";
import type { TranscriptEntry } from "../transcript/transcript-entry.js";
import type { VerificationFailure } from "../transcript/verification-report.js";
import { type BoundRecords, checkpointRecordHash, toolResultRecordHash } from "./bound-records.js";
import type { RunRecord } from "./run-record.js";
import type { RunStore } from "./run-store.js";

/** The entries a record check reads: found by their state in the stored line, parsed only then. */
const wantedStates = ['"state":"RECORD"', '"state":"PRECHECK"', '"state":"TERMINATE"'];

/**
 * Holds what a run store keeps beside a verified chain to it: every checkpoint and tool result must be the one a
 * RECORD entry binds (same content hash; none missing, none added), and the run row must say what the chain says
 * (the tenant and correlation id of its PRECHECK, the outcome of its TERMINATE). Only from the first PRECHECK that
 * declares its records bound (`run.bound_records`): runs, or the part of a run, written by a Charter that bound
 * nothing are not held to it. Returns the first record at fault, or null.
 */
export async function verifyBoundRecords(
  store: RunStore,
  run: RunRecord,
): Promise<VerificationFailure | null> {
  const runId = run.runId;
  let boundFrom: number | null = null;
  let identity: RunIdentity | null = null;
  const boundCheckpoints = new Map<number, { hash: string; entry: TranscriptEntry }>();
  const boundToolResults: { hash: string; entry: TranscriptEntry }[] = [];
  let lastSessionEntry: TranscriptEntry | null = null;
  for await (const page of store.readEntryLineTexts(runId)) {
    for (const { line } of page) {
      if (!wantedStates.some((state) => line.includes(state))) {
        lastSessionEntry = null;
        continue;
      }
      const entry = JSON.parse(line) as TranscriptEntry;
      if (entry.state === "RECORD") {
        const records = entry.result as BoundRecords;
        if (records.checkpoint !== undefined)
          boundCheckpoints.set(records.checkpoint.seq, { hash: records.checkpoint.hash, entry });
        for (const hash of records.tool_results ?? []) boundToolResults.push({ hash, entry });
        continue;
      }
      lastSessionEntry = entry;
      const declared = (entry.action as { run?: RunIdentity } | null)?.run;
      if (entry.state === "PRECHECK" && declared?.bound_records === 1 && boundFrom === null) {
        boundFrom = entry.seq;
        identity = declared;
      }
    }
  }
  if (boundFrom === null || identity === null) return null;

  for (const [column, stored, bound] of [
    ["tenant_id", run.tenantId, identity.tenant_id],
    ["correlation_id", run.correlationId, identity.correlation_id],
  ] as const) {
    if (stored !== bound) {
      return mismatch(
        `run ${column}`,
        boundFrom,
        `the run row's ${column} is ${JSON.stringify(stored)} but its PRECHECK entry (seq ${boundFrom}) records ${JSON.stringify(bound)}`,
      );
    }
  }
  if (run.status !== "running") {
    const terminate = lastSessionEntry?.state === "TERMINATE" ? lastSessionEntry : null;
    const ended = terminate?.result as { outcome?: string; error?: { code?: string } | null } | undefined;
    const outcome = ended?.outcome ?? null;
    if (
      terminate === null ||
      outcome !== run.outcome ||
      !statusFits(run.status, outcome, ended?.error?.code)
    ) {
      return mismatch(
        "run status",
        terminate?.seq ?? null,
        `the run row says ${run.status} (${run.outcome ?? "no outcome"}) but its chain ${
          terminate === null ? "does not end with a TERMINATE entry" : `ends with outcome ${outcome}`
        }`,
      );
    }
  }

  const checkpoints = await store.readCheckpoints(runId);
  const stored = new Set<number>();
  for (const checkpoint of checkpoints) {
    stored.add(checkpoint.seq);
    const bound = boundCheckpoints.get(checkpoint.seq);
    if (bound === undefined) {
      if (checkpoint.seq < boundFrom) continue;
      return mismatch(
        `checkpoint ${checkpoint.seq}`,
        checkpoint.seq,
        `the checkpoint covering entry ${checkpoint.seq} (turn ${checkpoint.turn}) is bound by no RECORD entry`,
      );
    }
    if (checkpointRecordHash(checkpoint.document) !== bound.hash) {
      return mismatch(
        `checkpoint ${checkpoint.seq}`,
        checkpoint.seq,
        `the checkpoint covering entry ${checkpoint.seq} (turn ${checkpoint.turn}) is not the one RECORD entry ${bound.entry.seq} binds`,
      );
    }
  }
  for (const [seq, bound] of boundCheckpoints) {
    if (!stored.has(seq)) {
      return mismatch(
        `checkpoint ${seq}`,
        seq,
        `the checkpoint covering entry ${seq}, bound by RECORD entry ${bound.entry.seq}, is missing`,
      );
    }
  }

  // Tool results are bound in the order they are stored; those before the bound part (stored by a Charter that
  // bound nothing, in a run it then resumed) may only precede them.
  const results = await store.readToolResults(runId);
  const unbound = results.length - boundToolResults.length;
  if (unbound < 0 || (unbound > 0 && boundFrom === 0)) {
    const position = unbound < 0 ? results.length : 0;
    return mismatch(
      `tool_result ${position}`,
      null,
      unbound < 0
        ? `the chain binds ${boundToolResults.length} tool results but ${results.length} are stored`
        : `tool result ${position} is bound by no RECORD entry`,
    );
  }
  for (const [index, bound] of boundToolResults.entries()) {
    const result = results[unbound + index];
    if (result === undefined || toolResultRecordHash(result) !== bound.hash) {
      return mismatch(
        `tool_result ${unbound + index}`,
        null,
        `tool result ${unbound + index} (call ${result?.callId}, turn ${result?.turn}) is not the one RECORD entry ${bound.entry.seq} binds`,
      );
    }
  }
  return null;
}

/** The statuses a run stopped with this outcome can have (a success whose end failed to record is `failed`). */
function statusFits(status: string, outcome: string | null, errorCode: string | undefined): boolean {
  if (outcome?.startsWith("COMPLETED") === true) return status === "completed" || status === "failed";
  if (outcome === "INTERRUPTED")
    return errorCode === "APPROVAL_REQUIRED" ? status === "awaiting_approval" : status === "interrupted";
  return status === "failed";
}

function mismatch(record: string, seq: number | null, detail: string): VerificationFailure {
  return { seq, step_id: null, reason_code: "RECORD_MISMATCH", detail, record };
}
