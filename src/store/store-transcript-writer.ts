import { CharterError } from "../foundation/charter-error.js";
import type { AccountingEntry } from "../session/accounting-entry.js";
import type { TranscriptEntryInput } from "../session/transcript-sink.js";
import type { TranscriptEntry, TranscriptHeader } from "../transcript/transcript-entry.js";
import type { TranscriptWriter } from "../transcript/transcript-writer.js";
import {
  type BoundRecords,
  boundRecordsEntry,
  checkpointRecordHash,
  toolResultRecordHash,
} from "./bound-records.js";
import type {
  CheckpointDocument,
  CommitReceipt,
  RawPayloadInput,
  RunFinish,
  StoredEntryInput,
  ToolOutputInput,
  ToolResultInput,
} from "./commit-batch.js";
import type { RunOwner, RunTotals } from "./run-record.js";
import type { RunStore } from "./run-store.js";
import { runNotFound, storeError } from "./store-errors.js";

export interface StoreTranscriptWriterOptions {
  readonly store: RunStore;
  readonly agentId: string;
  readonly tenantId?: string | null;
  readonly correlationId?: string | null;
  readonly parentRunId?: string | null;
  /** The process that runs the run, recorded when it is created. */
  readonly owner?: RunOwner | null;
  /**
   * `create` (the default) stores a new run once the header and the contract are written; `resume` continues
   * a stored run: the header and contract must be the stored ones, and entries continue its chain.
   */
  readonly mode?: "create" | "resume";
}

/** What the session hands over at a COMMIT, beside the entries and raw payloads the writer buffered. */
export interface WriterCommit {
  /** The session state needed to resume after this COMMIT (seed 003 INV-CP-001). */
  readonly checkpoint: CheckpointDocument;
  /** The accounting entries added since the previous commit. */
  readonly accounting?: readonly AccountingEntry[];
  /** The tool results of the turn. */
  readonly toolResults?: readonly ToolResultInput[];
  readonly toolOutputs?: readonly ToolOutputInput[];
  readonly totals?: RunTotals;
}

/** The stored chain after a commit, and where its checkpoint is stored (the seq of the entry it covers). */
export interface CheckpointReceipt extends CommitReceipt {
  readonly checkpointSeq: number;
}

/** How the run ended, handed over after its last entry (TERMINATE). */
export type WriterFinish = Omit<RunFinish, "runId" | "entries" | "rawPayloads" | "checkpoint">;

export interface StoreTranscriptWriter extends TranscriptWriter {
  /** The run's id once the header is written. */
  readonly runId: string | null;
  /**
   * Stores, in one transaction, every entry and raw payload handed over since the previous batch together
   * with a checkpoint covering the last COMMIT entry among them. Resolves once it is durable; the session
   * awaits it before the next inference. Throws ARGUMENT_INVALID (`batch_invalid`) when no COMMIT entry is
   * buffered.
   */
  commit(commit: WriterCommit): Promise<CheckpointReceipt>;
  /** Stores the remaining entries (TERMINATE) and stops the run with its outcome, in one transaction. */
  finish(finish: WriterFinish): Promise<CommitReceipt>;
  /** Stores tool results with every entry and raw payload handed over so far, in one transaction. */
  storeToolResults(toolResults: readonly ToolResultInput[]): Promise<CommitReceipt>;
}

/**
 * A transcript writer whose run lives in a run store. Entries and raw payloads are buffered (writer calls
 * are synchronous and never block) and handed to the store in batches: at each `commit` with the checkpoint,
 * at `finish` with the outcome, and at `flush` without a checkpoint. Store operations run one at a time, in
 * order; the first failure is kept and every later call reports it, as the file writer does.
 *
 * Connected to its transcript (`connect`, which the hash-chain transcript calls), every batch that stores a
 * checkpoint or tool results also stores a RECORD entry binding them by content hash (bound-records.ts), appended
 * through the transcript so that it is chained like any other entry.
 */
export function createStoreTranscriptWriter(options: StoreTranscriptWriterOptions): StoreTranscriptWriter {
  const { store } = options;
  const mode = options.mode ?? "create";
  let header: TranscriptHeader | null = null;
  let contractWritten = false;
  let pendingEntries: StoredEntryInput[] = [];
  let pendingRaw: RawPayloadInput[] = [];
  const rawHashesSent = new Set<string>();
  let tail: Promise<unknown> = Promise.resolve();
  let failure: Error | null = null;
  let closed = false;
  let chain: { append(entry: TranscriptEntryInput): string } | null = null;
  let lastEntry: TranscriptEntry | null = null;

  /** Appends the RECORD entry binding `records` (into the pending entries, through the transcript). */
  function bind(records: BoundRecords): void {
    if (chain === null || lastEntry === null) return;
    chain.append(boundRecordsEntry(records, lastEntry));
  }

  function toolResultHashes(toolResults: readonly ToolResultInput[] | undefined): {
    tool_results?: string[];
  } {
    return toolResults !== undefined && toolResults.length > 0
      ? { tool_results: toolResults.map(toolResultRecordHash) }
      : {};
  }

  function accept(): void {
    if (failure !== null) throw failure;
    if (closed) throw new CharterError("INTERNAL_ERROR", "the transcript writer is closed");
  }

  /** Runs store work after everything enqueued before it; a failure stops all later work. */
  function enqueue<T>(work: () => Promise<T>): Promise<T> {
    const run = tail.then(() => {
      if (failure !== null) throw failure;
      return work();
    });
    tail = run.catch((error: unknown) => {
      failure ??= error instanceof Error ? error : new Error(String(error));
    });
    return run;
  }

  function enqueueInBackground(work: () => Promise<unknown>): void {
    // The failure is kept by enqueue and reported by the next call, flush or commit.
    enqueue(work).catch(() => undefined);
  }

  function requireRun(): string {
    if (header === null || !contractWritten) {
      throw new CharterError(
        "INTERNAL_ERROR",
        "the run's header and contract must be written before a batch",
      );
    }
    return header.run_id;
  }

  function takeBuffers(): { entries: StoredEntryInput[]; rawPayloads: RawPayloadInput[] } {
    const taken = { entries: pendingEntries, rawPayloads: pendingRaw };
    pendingEntries = [];
    pendingRaw = [];
    return taken;
  }

  return {
    get runId() {
      return header?.run_id ?? null;
    },

    writeHeader(value: TranscriptHeader): void {
      accept();
      if (header !== null)
        throw new CharterError("INTERNAL_ERROR", "the transcript header was already written");
      header = value;
      if (mode === "resume") {
        enqueueInBackground(async () => {
          const run = await store.getRun(value.run_id);
          if (run === null) throw runNotFound(value.run_id);
          if (run.header.genesis_hash !== value.genesis_hash || run.contractHash !== value.contract_hash) {
            throw storeError(
              "chain_mismatch",
              `the transcript does not continue stored run ${value.run_id}`,
              {
                runId: value.run_id,
                storedContractHash: run.contractHash,
                contractHash: value.contract_hash,
              },
            );
          }
        });
      }
    },

    writeContract(value: unknown): void {
      accept();
      const runHeader = header;
      if (runHeader === null) {
        throw new CharterError("INTERNAL_ERROR", "the transcript header must be written before the contract");
      }
      const contract = value as { contract_id?: unknown; contract_hash?: unknown } | null;
      if (typeof contract?.contract_id !== "string" || typeof contract.contract_hash !== "string") {
        throw new CharterError("CONTRACT_INVALID", "the contract has no contract_id or contract_hash");
      }
      const identified = value as { contract_id: string; contract_hash: string };
      contractWritten = true;
      if (mode === "create") {
        enqueueInBackground(() =>
          store.createRun({
            header: runHeader,
            contract: identified,
            agentId: options.agentId,
            tenantId: options.tenantId ?? null,
            correlationId: options.correlationId ?? null,
            parentRunId: options.parentRunId ?? null,
            owner: options.owner ?? null,
          }),
        );
      }
    },

    appendEntry(entry: TranscriptEntry, line: string): void {
      accept();
      pendingEntries.push({ entry, line });
      lastEntry = entry;
    },

    connect(transcript) {
      chain = transcript;
    },

    writeRaw(hash: string, json: string): void {
      accept();
      if (rawHashesSent.has(hash)) return;
      rawHashesSent.add(hash);
      pendingRaw.push({ hash, json });
    },

    commit(commit: WriterCommit): Promise<CheckpointReceipt> {
      try {
        accept();
        const runId = requireRun();
        let covered: TranscriptEntry | null = null;
        // A `before_execute` checkpoint covers the last entry written before tools run; others a COMMIT.
        const beforeExecute = (commit.checkpoint as { kind?: unknown }).kind === "before_execute";
        for (let index = pendingEntries.length - 1; index >= 0 && covered === null; index--) {
          const entry = (pendingEntries[index] as StoredEntryInput).entry;
          if (entry.state === "COMMIT" || (beforeExecute && entry.state !== "RECORD")) covered = entry;
        }
        if (covered === null) {
          throw storeError(
            "batch_invalid",
            "a checkpoint needs a COMMIT entry written since the last batch",
            {
              runId,
            },
          );
        }
        const seq = covered.seq;
        bind({
          checkpoint: { seq, hash: checkpointRecordHash(commit.checkpoint) },
          ...toolResultHashes(commit.toolResults),
        });
        const { entries, rawPayloads } = takeBuffers();
        return enqueue(async () => ({
          ...(await store.appendCommit({
            runId,
            entries,
            rawPayloads,
            checkpoint: { seq, document: commit.checkpoint },
            ...(commit.accounting !== undefined ? { accounting: commit.accounting } : {}),
            ...(commit.toolResults !== undefined ? { toolResults: commit.toolResults } : {}),
            ...(commit.toolOutputs !== undefined ? { toolOutputs: commit.toolOutputs } : {}),
            ...(commit.totals !== undefined ? { totals: commit.totals } : {}),
          })),
          checkpointSeq: seq,
        }));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    finish(finish: WriterFinish): Promise<CommitReceipt> {
      try {
        accept();
        const runId = requireRun();
        if (finish.toolResults !== undefined && finish.toolResults.length > 0)
          bind(toolResultHashes(finish.toolResults));
        const { entries, rawPayloads } = takeBuffers();
        return enqueue(() => store.finishRun({ ...finish, runId, entries, rawPayloads }));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    storeToolResults(toolResults: readonly ToolResultInput[]): Promise<CommitReceipt> {
      try {
        accept();
        const runId = requireRun();
        bind(toolResultHashes(toolResults));
        const { entries, rawPayloads } = takeBuffers();
        return enqueue(() => store.appendCommit({ runId, entries, rawPayloads, toolResults }));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    async flush(): Promise<void> {
      if (failure !== null) throw failure;
      if ((pendingEntries.length > 0 || pendingRaw.length > 0) && header !== null && contractWritten) {
        const runId = header.run_id;
        const { entries, rawPayloads } = takeBuffers();
        enqueueInBackground(() => store.appendCommit({ runId, entries, rawPayloads }));
      }
      await tail;
      if (failure !== null) throw failure;
    },

    async close(): Promise<void> {
      if (closed) return;
      try {
        await this.flush();
      } finally {
        closed = true;
      }
    },
  };
}
