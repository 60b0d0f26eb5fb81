import { systemMessage, userMessage } from "../contract/agent-message.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { issueContractInstance } from "../contract/issue-contract-instance.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { PreflightProblem } from "../session/session-event.js";
import { emptyRunTotals } from "../store/run-record.js";
import type { RunStore } from "../store/run-store.js";
import { createStoreTranscriptWriter } from "../store/store-transcript-writer.js";
import { createHashChainTranscript } from "../transcript/hash-chain-transcript.js";
import { createJsonlTranscriptWriter } from "../transcript/jsonl-transcript-writer.js";
import { createTeeTranscriptWriter } from "../transcript/tee-transcript-writer.js";

/** Which preflight check an error that stopped a run before its session says failed. */
function problemOf(code: string, message: string): PreflightProblem {
  if (code === "MCP_SERVER_FAILED") return { check: "tool_servers", detail: message };
  if (code === "TOOL_REFERENCE_UNKNOWN") return { check: "tool_availability", detail: message };
  return { check: "contract", detail: message };
}

/**
 * Stores a run that failed before its session started (a tool server that would not start, a `tools` entry that
 * names nothing) as a `failed` run with outcome FAILED_PREFLIGHT: its contract as far as it was known, a PRECHECK
 * entry naming the failed check and a TERMINATE entry with the error, in the run store and the run directory, so
 * that `runs list`, `runs show` and `verify` show it like any run. Returns `failure` with the stored transcript.
 */
export async function storePreflightFailure(options: {
  readonly store: RunStore;
  readonly runId: string;
  readonly agentId: string;
  /** The contract the run would have run under (without the tools that did not start). */
  readonly contract: ExecutionContract;
  readonly systemPrompt: string;
  readonly prompt: string;
  readonly tenantId: string | null;
  readonly correlationId: string | null;
  /** The run this one is part of (a workflow run), if any. */
  readonly parentRunId?: string | null;
  readonly runDirectory: string;
  readonly environment: RuntimeEnvironment;
  readonly redactor: SecretRedactor;
  /** The failure result the run returns (`preflightFailureResult`), already redacted. */
  readonly failure: AIAgentResult;
}): Promise<AIAgentResult> {
  const { failure, environment } = options;
  const contract = issueContractInstance(options.contract, environment);
  const storeWriter = createStoreTranscriptWriter({
    store: options.store,
    agentId: options.agentId,
    tenantId: options.tenantId,
    correlationId: options.correlationId,
    parentRunId: options.parentRunId ?? null,
  });
  const transcript = createHashChainTranscript({
    runId: options.runId,
    contractHash: contract.contract_hash,
    adapterVersion: contract.adapter_version,
    modelProfileId: contract.model_profile_id,
    redactor: options.redactor,
    environment,
    writer: createTeeTranscriptWriter([createJsonlTranscriptWriter(options.runDirectory), storeWriter]),
  });
  transcript.writeContract(contract);
  const now = environment.now();
  const code = failure.error?.code ?? "PREFLIGHT_FAILED";
  const message = failure.error?.message ?? "the run could not start";
  const entry = (state: "PRECHECK" | "TERMINATE", action: unknown, result: unknown) =>
    transcript.append({
      state,
      step_id: `turn-0/${state.toLowerCase()}`,
      turn: 0,
      timestamp: now,
      action,
      result,
      model_fingerprint: null,
    });
  entry(
    "PRECHECK",
    {
      checks: ["contract", "context_feasibility", "tool_availability", "environment"],
      contract_hash: contract.contract_hash,
      conversation: [systemMessage(options.systemPrompt), userMessage(options.prompt)],
      started_at: now,
      run: { tenant_id: options.tenantId, correlation_id: options.correlationId, bound_records: 1 },
    },
    { ok: false, problems: [problemOf(code, message)] },
  );
  entry(
    "TERMINATE",
    { predicate: "preflight" },
    { error: { code, message }, final_report: failure.finalReport, outcome: "FAILED_PREFLIGHT" },
  );
  try {
    await storeWriter.finish({
      status: "failed",
      outcome: "FAILED_PREFLIGHT",
      errorCode: code,
      statusReason: "preflight_failed",
      finalReport: failure.finalReport,
      accounting: [],
      totals: emptyRunTotals,
    });
  } finally {
    await transcript.close();
  }
  return {
    ...failure,
    contractId: contract.contract_id,
    contractHash: contract.contract_hash,
    transcript: {
      entries: transcript.entryCount,
      headHash: transcript.headHash,
      directory: options.runDirectory,
    },
  };
}
