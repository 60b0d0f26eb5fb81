import type { Selectable } from "kysely";
import type { TranscriptHeader } from "../transcript/transcript-entry.js";
import type { RunRecord, RunStatus, RunSummary } from "./run-record.js";
import { type RunKind, runKinds, runStatuses } from "./run-record.js";
import type { RunsTable } from "./store-database.js";
import { storeError } from "./store-errors.js";
import { storeRecordVersion } from "./store-record-version.js";

/** The columns of the run row. */
export const runSummaryColumns = [
  "run_id",
  "v",
  "contract_id",
  "contract_hash",
  "agent_id",
  "status",
  "status_reason",
  "outcome",
  "error_code",
  "created_at",
  "updated_at",
  "finished_at",
  "tenant_id",
  "correlation_id",
  "parent_run_id",
  "turns",
  "tokens_in",
  "tokens_out",
  "cost_usd",
  "tools_used_json",
  "final_report_json",
  "head_hash",
  "entry_count",
  "accounting_count",
  "tool_result_count",
  "owner_pid",
  "owner_host",
  "owner_started_at",
  "heartbeat_at",
  "kind",
] as const satisfies readonly (keyof RunsTable)[];

export type RunSummaryRow = Pick<Selectable<RunsTable>, (typeof runSummaryColumns)[number]>;

const knownStatuses: ReadonlySet<string> = new Set(runStatuses);
const knownKinds: ReadonlySet<string> = new Set(runKinds);

export function toRunSummary(row: RunSummaryRow): RunSummary {
  if (row.v > storeRecordVersion || !knownStatuses.has(row.status) || !knownKinds.has(row.kind)) {
    throw storeError(
      "schema_newer",
      `run ${row.run_id} was stored by a newer Charter (record version ${row.v}, status ${row.status}, kind ${row.kind})`,
      { runId: row.run_id, version: row.v, status: row.status, kind: row.kind },
    );
  }
  return {
    v: row.v,
    runId: row.run_id,
    kind: row.kind as RunKind,
    contractId: row.contract_id,
    contractHash: row.contract_hash,
    agentId: row.agent_id,
    status: row.status as RunStatus,
    statusReason: row.status_reason,
    outcome: row.outcome,
    errorCode: row.error_code,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
    tenantId: row.tenant_id,
    correlationId: row.correlation_id,
    parentRunId: row.parent_run_id,
    totals: {
      turns: row.turns,
      tokensIn: row.tokens_in,
      tokensOut: row.tokens_out,
      costUsd: row.cost_usd,
      toolsUsed: JSON.parse(row.tools_used_json) as string[],
    },
    finalReport: row.final_report_json === null ? null : (JSON.parse(row.final_report_json) as unknown),
    headHash: row.head_hash,
    entryCount: row.entry_count,
    accountingCount: row.accounting_count,
    toolResultCount: row.tool_result_count,
    owner:
      row.owner_pid === null || row.owner_host === null || row.owner_started_at === null
        ? null
        : { pid: Number(row.owner_pid), host: row.owner_host, startedAt: Number(row.owner_started_at) },
    heartbeatAt: row.heartbeat_at === null ? null : Number(row.heartbeat_at),
  };
}

export function toRunRecord(
  row: RunSummaryRow,
  documents: { readonly contract_json: string; readonly header_json: string },
): RunRecord {
  return {
    ...toRunSummary(row),
    contract: JSON.parse(documents.contract_json) as unknown,
    header: JSON.parse(documents.header_json) as TranscriptHeader,
  };
}
