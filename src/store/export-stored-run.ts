import type { Kysely } from "kysely";
import { type RunExport, runExportFormat, runExportVersion } from "./run-export.js";
import type { RunRecord } from "./run-record.js";
import type { StoreDatabase } from "./store-database.js";

/** Reads everything stored for a run into the current export format, every list in its stored order. */
export async function exportStoredRun(
  database: Kysely<StoreDatabase>,
  run: RunRecord,
  schemaVersion: number,
): Promise<RunExport> {
  const { runId } = run;
  const [entries, raw, checkpoints, accounting, toolResults, toolOutputs] = await Promise.all([
    database
      .selectFrom("charter_transcript_entries")
      .select("line")
      .where("run_id", "=", runId)
      .orderBy("seq")
      .execute(),
    database
      .selectFrom("charter_run_raw_payloads as link")
      .innerJoin("charter_raw_payloads as raw", "raw.hash", "link.hash")
      .select(["raw.hash", "raw.json"])
      .where("link.run_id", "=", runId)
      .orderBy("link.hash")
      .execute(),
    database
      .selectFrom("charter_checkpoints")
      .selectAll()
      .where("run_id", "=", runId)
      .orderBy("seq")
      .execute(),
    database
      .selectFrom("charter_accounting_entries")
      .select("entry_json")
      .where("run_id", "=", runId)
      .orderBy("position")
      .execute(),
    database
      .selectFrom("charter_tool_results")
      .selectAll()
      .where("run_id", "=", runId)
      .orderBy("position")
      .execute(),
    database
      .selectFrom("charter_tool_outputs")
      .selectAll()
      .where("run_id", "=", runId)
      .orderBy("handle")
      .execute(),
  ]);
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
    },
    header: run.header,
    contract: run.contract as Record<string, unknown>,
    entries: entries.map((entry) => entry.line),
    raw_payloads: raw.map((payload) => ({ hash: payload.hash, json: payload.json })),
    checkpoints: checkpoints.map((checkpoint) => ({
      seq: checkpoint.seq,
      turn: checkpoint.turn,
      created_at: checkpoint.created_at,
      checkpoint: JSON.parse(checkpoint.checkpoint_json) as { v: number },
    })),
    accounting: accounting.map(
      (entry) => JSON.parse(entry.entry_json) as { type: string; turn: number; timestamp: number },
    ),
    tool_results: toolResults.map((result) => ({
      turn: result.turn,
      call_id: result.call_id,
      tool_name: result.tool_name,
      server: result.server,
      request_hash: result.request_hash,
      status: result.status,
      error_code: result.error_code,
      created_at: result.created_at,
      result: JSON.parse(result.result_json) as unknown,
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
