import type { RunSummary } from "../store/run-record.js";

/** What `charter runs list` and `charter runs show` print of a stored run (the same fields in both). */
export interface StoredRunSummary {
  readonly runId: string;
  readonly agentId: string;
  readonly status: string;
  readonly statusReason: string | null;
  readonly outcome: string | null;
  readonly errorCode: string | null;
  readonly turns: number;
  /** Names of the tools executed, in first-use order. */
  readonly toolsUsed: readonly string[];
  readonly tokens: { readonly input: number; readonly output: number };
  readonly costUsd: number;
  /** ISO 8601. */
  readonly createdAt: string;
  readonly finishedAt: string | null;
  /** From created to finished, in milliseconds; null while the run has not finished. */
  readonly durationMs: number | null;
  readonly entries: number;
  /** The hash of the run's last stored transcript entry: what `verify` and `replay` report as the head. */
  readonly chainHead: string;
  readonly contractHash: string;
  readonly parentRunId: string | null;
  readonly tenantId: string | null;
  readonly correlationId: string | null;
}

export function storedRunSummary(run: RunSummary): StoredRunSummary {
  return {
    runId: run.runId,
    agentId: run.agentId,
    status: run.status,
    statusReason: run.statusReason,
    outcome: run.outcome,
    errorCode: run.errorCode,
    turns: run.totals.turns,
    toolsUsed: run.totals.toolsUsed,
    tokens: { input: run.totals.tokensIn, output: run.totals.tokensOut },
    costUsd: run.totals.costUsd,
    createdAt: new Date(run.createdAt).toISOString(),
    finishedAt: run.finishedAt === null ? null : new Date(run.finishedAt).toISOString(),
    durationMs: run.finishedAt === null ? null : run.finishedAt - run.createdAt,
    entries: run.entryCount,
    chainHead: run.headHash,
    contractHash: run.contractHash,
    parentRunId: run.parentRunId,
    tenantId: run.tenantId,
    correlationId: run.correlationId,
  };
}
