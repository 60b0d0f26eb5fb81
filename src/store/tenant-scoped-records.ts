import type { RunRecordsAccess } from "./run-records-access.js";
import { runNotFound } from "./store-errors.js";
import type { StoreGuard } from "./store-guard.js";
import type { CheckpointRecord } from "./stored-records.js";
import type { TenantScope } from "./tenant-scope.js";

type RecordsWithCheckpoints = RunRecordsAccess & {
  readonly allCheckpoints: (runId: string) => Promise<CheckpointRecord[]>;
};

/**
 * A run's records as one tenant may read them: each read first checks that the run is the tenant's, and answers
 * another tenant's run exactly as it answers a run that is not stored (no lines, no payload, no checkpoint, no
 * entries; RUN_NOT_FOUND where a write needs the run), so that nothing tells one from the other.
 */
export function tenantScopedRecords(
  records: RecordsWithCheckpoints,
  scope: TenantScope,
  guard: StoreGuard,
): RecordsWithCheckpoints {
  const owns = (operation: string, runId: string) => guard(operation, { runId }, () => scope.includes(runId));

  async function* ifOwned<Page>(
    operation: string,
    runId: string,
    pages: () => AsyncIterable<Page>,
  ): AsyncGenerator<Page> {
    if (await owns(operation, runId)) yield* pages();
  }

  return {
    readEntryLines: (runId, options) =>
      ifOwned("readEntryLines", runId, () => records.readEntryLines(runId, options)),
    readEntryLineTexts: (runId, options) =>
      ifOwned("readEntryLineTexts", runId, () => records.readEntryLineTexts(runId, options)),
    readEntries: (runId, options) => ifOwned("readEntries", runId, () => records.readEntries(runId, options)),
    readRunRawPayloads: (runId, options) =>
      ifOwned("readRunRawPayloads", runId, () => records.readRunRawPayloads(runId, options)),
    readRaw: async (runId, hash) => ((await owns("readRaw", runId)) ? records.readRaw(runId, hash) : null),
    latestCheckpoint: async (runId) =>
      (await owns("latestCheckpoint", runId)) ? records.latestCheckpoint(runId) : null,
    readCheckpoint: async (runId, seq) =>
      (await owns("readCheckpoint", runId)) ? records.readCheckpoint(runId, seq) : null,
    allCheckpoints: async (runId) =>
      (await owns("readCheckpoints", runId)) ? records.allCheckpoints(runId) : [],
    readAccounting: async (runId) =>
      (await owns("readAccounting", runId)) ? records.readAccounting(runId) : [],
    readToolResults: async (runId, filter) =>
      (await owns("readToolResults", runId)) ? records.readToolResults(runId, filter) : [],
    listToolOutputs: async (runId) =>
      (await owns("listToolOutputs", runId)) ? records.listToolOutputs(runId) : [],
    recordToolOutput: async (runId, output) => {
      if (!(await owns("recordToolOutput", runId))) throw runNotFound(runId);
      return records.recordToolOutput(runId, output);
    },
  };
}
