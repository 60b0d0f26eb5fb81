import type { Kysely } from "kysely";
import { blake3Hex } from "../foundation/content-hash.js";
import { parseRunExport } from "./run-export.js";
import type { RunRecord, RunStatus } from "./run-record.js";
import { toRunRecord } from "./run-row.js";
import type { TransactionRunner } from "./statement-program.js";
import type { StoreDatabase } from "./store-database.js";
import { storeError } from "./store-errors.js";
import { storeRecordVersion } from "./store-record-version.js";
import type { StoreStatements } from "./store-statements.js";

interface EntryColumns {
  readonly seq: number;
  readonly step_id: string;
  readonly state: string;
  readonly turn: number;
  readonly timestamp: number;
  readonly hash: string;
}

/**
 * Stores an exported run (of any supported export version) in one transaction. The export is untrusted:
 * each raw payload must hash to its name (a wrong one would poison the payloads other runs share) and each
 * line must be an entry at its position; the chain itself is left to verification, which reports a
 * tampered export precisely.
 */
export async function importRunExport(
  database: Kysely<StoreDatabase>,
  runner: TransactionRunner,
  statements: StoreStatements,
  value: unknown,
  now: number,
  tenantId: string | null,
): Promise<RunRecord> {
  const exported = parseRunExport(value);
  const { run } = exported;
  if (run.tenant_id !== tenantId) {
    throw storeError("tenant_mismatch", `run ${run.run_id} is another tenant's than the store's`, {
      runId: run.run_id,
      requestedTenantId: run.tenant_id,
    });
  }
  if (exported.header.run_id !== run.run_id) {
    throw storeError("export_invalid", "the export's header names another run", {
      runId: run.run_id,
      headerRunId: exported.header.run_id,
    });
  }
  for (const payload of exported.raw_payloads) {
    if (blake3Hex(payload.json) !== payload.hash) {
      throw storeError("export_invalid", `raw payload ${payload.hash} does not hash to its name`, {
        runId: run.run_id,
        hash: payload.hash,
      });
    }
  }
  const entries = exported.entries.map((line, index) => readEntryColumns(line, index, run.run_id));
  const runRow = {
    run_id: run.run_id,
    v: storeRecordVersion,
    contract_id: run.contract_id,
    contract_hash: run.contract_hash,
    agent_id: run.agent_id,
    status: run.status satisfies RunStatus,
    status_reason: run.status_reason,
    outcome: run.outcome,
    error_code: run.error_code,
    created_at: run.created_at,
    updated_at: run.updated_at,
    finished_at: run.finished_at,
    tenant_id: run.tenant_id,
    correlation_id: run.correlation_id,
    parent_run_id: run.parent_run_id,
    turns: run.turns,
    tokens_in: run.tokens_in,
    tokens_out: run.tokens_out,
    cost_usd: run.cost_usd,
    tools_used_json: JSON.stringify(run.tools_used),
    final_report_json: run.final_report === undefined ? null : JSON.stringify(run.final_report),
    head_hash: run.head_hash,
    entry_count: run.entry_count,
    accounting_count: exported.accounting.length,
    tool_result_count: exported.tool_results.length,
    segment_count: 0,
    // An imported run is nobody's: no process runs it here.
    owner_pid: null,
    owner_host: null,
    owner_started_at: null,
    heartbeat_at: null,
    kind: run.kind ?? "agent",
  };
  const runId = run.run_id;
  const documents = {
    run_id: runId,
    v: storeRecordVersion,
    contract_json: JSON.stringify(exported.contract),
    header_json: JSON.stringify(exported.header),
  };
  await runner.run(function* () {
    const existing = yield database
      .selectFrom("charter_runs")
      .select("run_id")
      .where("run_id", "=", runId)
      .compile();
    if (existing.length > 0) throw storeError("run_exists", `run ${runId} is already stored`, { runId });
    yield* statements.insertRows("charter_runs", [runRow]);
    yield* statements.insertRows("charter_run_contracts", [documents]);
    yield* statements.insertRows(
      "charter_transcript_entries",
      entries.map((entry, index) => ({
        run_id: runId,
        v: storeRecordVersion,
        ...entry,
        line: exported.entries[index] as string,
      })),
    );
    yield* statements.insertRows(
      "charter_raw_payloads",
      exported.raw_payloads.map(({ hash, json }) => ({
        hash,
        v: storeRecordVersion,
        json,
        bytes: Buffer.byteLength(json),
        created_at: now,
      })),
      "ignore-duplicates",
    );
    yield* statements.insertRows(
      "charter_run_raw_payloads",
      exported.raw_payloads.map(({ hash }) => ({ run_id: runId, hash })),
    );
    yield* statements.insertRows(
      "charter_checkpoints",
      exported.checkpoints.map((checkpoint) => ({
        run_id: runId,
        seq: checkpoint.seq,
        v: storeRecordVersion,
        turn: checkpoint.turn,
        created_at: checkpoint.created_at,
        checkpoint_json: JSON.stringify(checkpoint.checkpoint),
      })),
    );
    yield* statements.insertRows(
      "charter_accounting_entries",
      exported.accounting.map((entry, position) => ({
        run_id: runId,
        position,
        v: storeRecordVersion,
        type: entry.type,
        turn: entry.turn,
        timestamp: entry.timestamp,
        entry_json: JSON.stringify(entry),
      })),
    );
    yield* statements.insertRows(
      "charter_tool_results",
      exported.tool_results.map((result, position) => ({
        run_id: runId,
        position,
        v: storeRecordVersion,
        turn: result.turn,
        call_id: result.call_id,
        tool_name: result.tool_name,
        server: result.server,
        request_hash: result.request_hash,
        status: result.status,
        error_code: result.error_code,
        created_at: result.created_at,
        result_json: JSON.stringify(result.result ?? null),
      })),
    );
    yield* statements.insertRows(
      "charter_tool_outputs",
      exported.tool_outputs.map((output) => ({
        run_id: runId,
        handle: output.handle,
        v: storeRecordVersion,
        tool_name: output.tool_name,
        call_id: output.call_id,
        bytes: output.bytes,
        lines: output.lines,
        path: output.path,
        created_at: output.created_at,
      })),
    );
  });
  return toRunRecord(runRow, documents);
}

function readEntryColumns(line: string, index: number, runId: string): EntryColumns {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    value = null;
  }
  const entry = value as Partial<Record<keyof EntryColumns, unknown>> | null;
  if (
    entry === null ||
    typeof entry !== "object" ||
    entry.seq !== index ||
    typeof entry.step_id !== "string" ||
    typeof entry.state !== "string" ||
    typeof entry.turn !== "number" ||
    typeof entry.timestamp !== "number" ||
    typeof entry.hash !== "string" ||
    line.includes("\n")
  ) {
    throw storeError(
      "export_invalid",
      `entry ${index} of the export is not a transcript entry at seq ${index}`,
      {
        runId,
        seq: index,
      },
    );
  }
  return {
    seq: index,
    step_id: entry.step_id,
    state: entry.state,
    turn: entry.turn,
    timestamp: entry.timestamp,
    hash: entry.hash,
  };
}
