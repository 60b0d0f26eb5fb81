import { canonicalJson } from "../foundation/canonical-json.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { FinalReport } from "../session/final-report.js";
import type { RunSummary, RunTotals } from "../store/run-record.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";

/** What came of running one step's action (or a compensation): an agent run, or a tool call. */
export interface StepRunResult {
  /** The agent run (null for a tool call). */
  readonly runId: string | null;
  /** `interrupted`: the run stopped where a resume continues it (a signal, an approval it waits for). */
  readonly status: "completed" | "failed" | "interrupted";
  /** The run's outcome, or the tool result's status. */
  readonly outcome: string | null;
  /** The report as text (a JSON report as its canonical JSON), or the tool's output. */
  readonly report: string;
  /** The report's JSON value, when it is JSON. */
  readonly json?: unknown;
  readonly error: { readonly code: string; readonly message: string } | null;
  /** The run's contract hash and stored chain (its length and head) as it ended: what the workflow records. */
  readonly contractHash: string | null;
  readonly headHash: string | null;
  readonly entryCount: number;
  readonly totals: RunTotals;
  /** For a tool call: its frozen, redacted result. */
  readonly toolResult?: ToolExecutionResult;
}

function reportText(report: FinalReport | null | undefined): { report: string; json?: unknown } {
  if (report === null || report === undefined) return { report: "" };
  if (report.content_json !== undefined)
    return { report: canonicalJson(report.content_json), json: report.content_json };
  return { report: report.content ?? "" };
}

export function stepResultFromAgentResult(result: AIAgentResult): StepRunResult {
  return {
    runId: result.runId,
    status: result.success ? "completed" : result.outcome === "INTERRUPTED" ? "interrupted" : "failed",
    outcome: result.outcome,
    ...reportText(result.finalReport),
    error: result.error === null ? null : { code: result.error.code, message: result.error.message },
    contractHash: result.contractHash,
    headHash: result.transcript.headHash,
    entryCount: result.transcript.entries,
    totals: {
      turns: result.turns,
      tokensIn: result.tokens.input,
      tokensOut: result.tokens.output,
      costUsd: result.costUsd ?? 0,
      toolsUsed: result.toolsUsed,
    },
  };
}

/** A step's run that ended before the workflow recorded it (the process died in between): read from the store. */
export function stepResultFromStoredRun(run: RunSummary): StepRunResult {
  const status =
    run.status === "completed" ? "completed" : run.status === "failed" ? "failed" : "interrupted";
  return {
    runId: run.runId,
    status,
    outcome: run.outcome,
    ...reportText(run.finalReport as FinalReport | null),
    error:
      run.errorCode === null
        ? null
        : {
            code: run.errorCode,
            message: `run ${run.runId} ended ${run.outcome ?? run.status} (${run.errorCode})`,
          },
    contractHash: run.contractHash,
    headHash: run.headHash,
    entryCount: run.entryCount,
    totals: run.totals,
  };
}

/** A tool call's result: its output is the report (and its JSON value, when the output is JSON). */
export function stepResultFromToolResult(result: ToolExecutionResult, interrupted: boolean): StepRunResult {
  let json: unknown;
  try {
    json = JSON.parse(result.content);
  } catch {
    json = undefined;
  }
  return {
    runId: null,
    status: result.status === "ok" ? "completed" : interrupted ? "interrupted" : "failed",
    outcome: result.status,
    report: result.content,
    ...(json !== undefined ? { json } : {}),
    error:
      result.status === "ok"
        ? null
        : { code: result.error_code ?? "TOOL_EXECUTION_FAILED", message: result.content },
    contractHash: null,
    headHash: null,
    entryCount: 0,
    totals: {
      turns: 0,
      tokensIn: 0,
      tokensOut: 0,
      costUsd: 0,
      toolsUsed: result.executed ? [result.tool_name] : [],
    },
    toolResult: result,
  };
}
