import { CharterError } from "../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
import type { WorkflowTranscriptState } from "../session/transcript-sink.js";
import { checkpointRecordHash } from "../store/bound-records.js";
import type { RawPayloadInput, StoredEntryInput } from "../store/commit-batch.js";
import type { RunOwner, RunTotals, StoppedRunStatus } from "../store/run-record.js";
import type { RunStore } from "../store/run-store.js";
import { createHashChainTranscript } from "../transcript/hash-chain-transcript.js";
import type { TranscriptWriter } from "../transcript/transcript-writer.js";
import type { WorkflowCheckpoint } from "./workflow-checkpoint.js";
import { type WorkflowContract, workflowAdapterVersion, workflowProfileId } from "./workflow-contract.js";

/** How a workflow run's row ends: the store's status, the workflow's status as its outcome, the first error. */
export interface WorkflowRunEnd {
  readonly status: StoppedRunStatus;
  readonly outcome: string;
  readonly errorCode: string | null;
  readonly finalReport: unknown;
  readonly totals: RunTotals;
}

/**
 * The workflow's own hash-chained transcript, kept in the run store beside its checkpoints. Entries are buffered
 * and stored in batches: `commit` stores them with a WORKFLOW_CHECKPOINT entry naming the checkpoint's content
 * hash and the checkpoint itself, in ONE transaction (a step's start or end and its checkpoint are durable
 * together or not at all); `finish` stores the rest and ends the run.
 */
export interface WorkflowRecorder {
  readonly entryCount: number;
  readonly headHash: string;
  append(state: WorkflowTranscriptState, stepId: string, action: unknown, result: unknown): void;
  commit(checkpoint: WorkflowCheckpoint, totals: RunTotals): Promise<void>;
  finish(end: WorkflowRunEnd): Promise<void>;
}

export interface WorkflowRecorderOptions {
  readonly store: RunStore;
  readonly runId: string;
  readonly contract: WorkflowContract;
  readonly redactor: SecretRedactor;
  readonly environment: RuntimeEnvironment;
  /** A new run: stored now, with these. */
  readonly create?: {
    readonly tenantId: string | null;
    readonly correlationId: string | null;
    readonly owner: RunOwner;
  };
  /** A resumed run (already reopened): its chain continues from here. */
  readonly continueFrom?: {
    readonly entryCount: number;
    readonly headHash: string;
    readonly createdAt: string;
  };
}

export async function createWorkflowRecorder(options: WorkflowRecorderOptions): Promise<WorkflowRecorder> {
  const { store, runId, contract, redactor, environment } = options;
  let entries: StoredEntryInput[] = [];
  let rawPayloads: RawPayloadInput[] = [];
  const writer: TranscriptWriter = {
    writeHeader: () => undefined,
    writeContract: () => undefined,
    appendEntry: (entry, line) => {
      entries.push({ entry, line });
    },
    writeRaw: (hash, json) => {
      rawPayloads.push({ hash, json });
    },
    flush: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  const transcript = createHashChainTranscript({
    runId,
    contractHash: contract.contract_hash,
    adapterVersion: workflowAdapterVersion,
    modelProfileId: workflowProfileId,
    redactor,
    environment,
    writer,
    ...(options.continueFrom !== undefined ? { continueFrom: options.continueFrom } : {}),
  });
  if (options.create !== undefined) {
    if (redactor.containsSecret(contract)) {
      throw new CharterError("CONTRACT_INVALID", "the workflow contains a registered secret", {
        details: { runId, reason: "contract_contains_secret" },
      });
    }
    await store.createRun({
      header: transcript.header,
      contract,
      agentId: contract.workflow_id,
      kind: "workflow",
      tenantId: options.create.tenantId,
      correlationId: options.create.correlationId,
      owner: options.create.owner,
    });
  }
  const take = () => {
    const taken = { entries, rawPayloads };
    entries = [];
    rawPayloads = [];
    return taken;
  };
  const append = (state: WorkflowTranscriptState, stepId: string, action: unknown, result: unknown) => {
    transcript.append({
      state,
      step_id: stepId,
      turn: 0,
      timestamp: environment.now(),
      action,
      result,
      model_fingerprint: null,
    });
  };
  return {
    get entryCount() {
      return transcript.entryCount;
    },
    get headHash() {
      return transcript.headHash;
    },
    append,
    async commit(checkpoint, totals) {
      // Redacted as the transcript is, so that the stored checkpoint and the hash its entry names agree.
      const document = redactor.redactValue(checkpoint) as WorkflowCheckpoint;
      append(
        "WORKFLOW_CHECKPOINT",
        `checkpoint/${transcript.entryCount}`,
        { step_index: document.stepIndex, completed_step_id: document.completedStepId },
        { checkpoint_hash: checkpointRecordHash(document) },
      );
      const seq = transcript.entryCount - 1;
      await store.appendCommit({ runId, ...take(), checkpoint: { seq, document }, totals });
    },
    async finish(end) {
      await store.finishRun({
        runId,
        ...take(),
        status: end.status,
        outcome: end.outcome,
        errorCode: end.errorCode,
        finalReport: redactor.redactValue(end.finalReport),
        totals: end.totals,
      });
    },
  };
}
