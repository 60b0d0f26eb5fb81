import type { Kysely } from "kysely";
import { type RunExport, runExportFormat, runExportVersion } from "./run-export.js";
import type { RunRecord } from "./run-record.js";
import type { RunRecordsAccess } from "./run-records-access.js";
import type { StoreDatabase } from "./store-database.js";
import type { CheckpointRecord, StoredRawPayload } from "./stored-records.js";

/** Reads everything stored for a run into the current export format, every list in its stored order. */
export async function exportStoredRun(
  database: Kysely<StoreDatabase>,
  access: RunRecordsAccess & { readonly allCheckpoints: (runId: string) => Promise<CheckpointRecord[]> },
  run: RunRecord,
  schemaVersion: number,
): Promise<RunExport> {
  const { runId } = run;
  const entries: string[] = [];
  for await (const page of access.readEntryLineTexts(runId))
    for (const stored of page) entries.push(stored.line);
  const raw: StoredRawPayload[] = [];
  for await (const page of access.readRunRawPayloads(runId)) raw.push(...page);
  // In hash order, whichever way the run stored them: an export of the same run is the same document.
  raw.sort((first, second) => (first.hash < second.hash ? -1 : first.hash > second.hash ? 1 : 0));
  const checkpoints = await access.allCheckpoints(runId);
  const accounting = await access.readAccounting(runId);
  const toolResults = await access.readToolResults(runId);
  const toolOutputs = await database
    .selectFrom("charter_tool_outputs")
    .selectAll()
    .where("run_id", "=", runId)
    .orderBy("handle")
    .execute();
  return {
    format: runExportFormat,
    v: runExportVersion,
    schema_version: schemaVersion,
    run: {
      run_id: run.runId,
      contract_id: run.contractId,
      contract_hash: run.contractHash,
      agent_id: run.agentId,
      status: run.status,
      status_reason: run.statusReason,
      outcome: run.outcome,
      error_code: run.errorCode,
      created_at: run.createdAt,
      updated_at: run.updatedAt,
      finished_at: run.finishedAt,
      tenant_id: run.tenantId,
      correlation_id: run.correlationId,
      parent_run_id: run.parentRunId,
      turns: run.totals.turns,
      tokens_in: run.totals.tokensIn,
      tokens_out: run.totals.tokensOut,
      cost_usd: run.totals.costUsd,
      tools_used: [...run.totals.toolsUsed],
      final_report: run.finalReport,
      head_hash: run.headHash,
      entry_count: run.entryCount,
      ...(run.kind !== "agent" ? { kind: run.kind } : {}),
    },
    header: run.header,
    contract: run.contract as Record<string, unknown>,
    entries,
    raw_payloads: raw.map((payload) => ({ hash: payload.hash, json: payload.json })),
    checkpoints: checkpoints.map((checkpoint) => ({
      seq: checkpoint.seq,
      turn: checkpoint.turn,
      created_at: checkpoint.createdAt,
      checkpoint: checkpoint.document,
    })),
    accounting: accounting as unknown as { type: string; turn: number; timestamp: number }[],
    tool_results: toolResults.map((result) => ({
      turn: result.turn,
      call_id: result.callId,
      tool_name: result.toolName,
      server: result.server,
      request_hash: result.requestHash,
      status: result.status,
      error_code: result.errorCode,
      created_at: result.createdAt,
      result: result.result,
    })),
    tool_outputs: toolOutputs.map((output) => ({
      handle: output.handle,
      tool_name: output.tool_name,
      call_id: output.call_id,
      bytes: output.bytes,
      lines: output.lines,
      path: output.path,
      created_at: output.created_at,
    })),
  };
}
