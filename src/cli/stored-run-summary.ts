import { isRunAbandoned } from "../runner/run-owner.js";
import type { RunSummary } from "../store/run-record.js";
import { tenantFlag } from "./tenant-flag.js";

/** What `charter runs list` and `charter runs show` print of a stored run (the same fields in both). */
export interface StoredRunSummary {
  readonly runId: string;
  /** `agent`, or `workflow` for a workflow run (whose agentId is the workflow's id). */
  readonly kind: string;
  readonly agentId: string;
  /** The stored status, or `abandoned` for a `running` run whose process is gone. */
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
  /** Who runs (or last ran) the run, and when it last said it was alive (ISO 8601). */
  readonly owner: { readonly pid: number; readonly host: string; readonly startedAt: string } | null;
  readonly heartbeatAt: string | null;
  /** For an abandoned run: the command that continues it (`charter workflow resume` for a workflow run). */
  readonly resumeCommand: string | null;
}

export function storedRunSummary(run: RunSummary, now: number = Date.now()): StoredRunSummary {
  const abandoned = isRunAbandoned(run, now);
  return {
    runId: run.runId,
    kind: run.kind,
    agentId: run.agentId,
    status: abandoned ? "abandoned" : run.status,
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
    owner:
      run.owner === null
        ? null
        : {
            pid: run.owner.pid,
            host: run.owner.host,
            startedAt: new Date(run.owner.startedAt).toISOString(),
          },
    heartbeatAt: run.heartbeatAt === null ? null : new Date(run.heartbeatAt).toISOString(),
    resumeCommand: abandoned
      ? run.kind === "workflow"
        ? `charter workflow resume ${run.runId}${tenantFlag(run.tenantId)}`
        : `charter resume ${run.runId}${tenantFlag(run.tenantId)}`
      : null,
  };
}
