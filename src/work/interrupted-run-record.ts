import { join } from "node:path";
import { selectRunStore } from "../runner/select-run-store.js";
import { openRunStore } from "../store/open-run-store.js";
import { readRunDirectory } from "../transcript/read-transcript.js";
import type { ReceiptStoreOptions } from "./store-work-receipt.js";
import type { WorkLockRecord } from "./work-lock.js";
import type { WorkRepository } from "./work-repository.js";

/** What the record of an interrupted item's run says, for its failure receipt (nulls: nothing was recorded). */
export interface InterruptedRunRecord {
  /** The run's contract hash: known as soon as the run was created. */
  readonly contractHash: string | null;
  /** The hash of the last transcript entry recorded before the process died (null: none was). */
  readonly transcriptHead: string | null;
}

/** Where recovery looks for the run: the run store (as receipts are stored) and run directories. */
export interface InterruptedRunSources extends ReceiptStoreOptions {
  /** The recovering command's `--runs-dir`, looked in after the folder the lock record names. */
  readonly runsDirectory?: string;
}

const nothingRecorded: InterruptedRunRecord = { contractHash: null, transcriptHead: null };

/**
 * What the run of an item whose process died had recorded: first the run store the receipts go to (for the
 * tenant), then the run directory the lock record names (or the recovering command's). A run that was never
 * created (the process died before the agent's run started: its tool servers starting, say), or a source that
 * cannot be read, gives nulls: recovery never fails for want of them.
 */
export async function interruptedRunRecord(
  repository: WorkRepository,
  record: WorkLockRecord,
  sources: InterruptedRunSources,
): Promise<InterruptedRunRecord> {
  const stored = await fromRunStore(repository, record.run_id, sources).catch(() => null);
  if (stored !== null) return stored;
  const folders = [record.runs_directory, sources.runsDirectory].filter(
    (folder): folder is string => folder !== undefined,
  );
  for (const folder of new Set(folders)) {
    const written = await fromRunDirectory(join(folder, record.run_id)).catch(() => null);
    if (written !== null) return written;
  }
  return nothingRecorded;
}

async function fromRunStore(
  repository: WorkRepository,
  runId: string,
  sources: InterruptedRunSources,
): Promise<InterruptedRunRecord | null> {
  const location = await selectRunStore({
    store: sources.store,
    cwd: repository.root,
    ...(sources.configPath !== undefined ? { configPath: sources.configPath } : {}),
    ...(sources.promptDirectory !== undefined ? { promptDirectory: sources.promptDirectory } : {}),
    ...(sources.homeDirectory !== undefined ? { homeDirectory: sources.homeDirectory } : {}),
    ...(sources.processEnvironment !== undefined ? { processEnvironment: sources.processEnvironment } : {}),
  });
  const store = await openRunStore({
    ...location,
    environment: sources.environment,
    tenantId: sources.tenantId ?? null,
  });
  try {
    const run = await store.getRun(runId);
    if (run === null) return null;
    // Before its first entry a stored run's head is its genesis hash: no entry was recorded.
    return { contractHash: run.contractHash, transcriptHead: run.entryCount > 0 ? run.headHash : null };
  } finally {
    await store.close();
  }
}

async function fromRunDirectory(runDirectory: string): Promise<InterruptedRunRecord> {
  const run = await readRunDirectory(runDirectory);
  return {
    contractHash: run.contract?.contract_hash ?? run.header.contract_hash,
    // A line cut off mid-write is not in `entries`: the head is the last entry written whole.
    transcriptHead: run.entries.at(-1)?.hash ?? null,
  };
}
