import type { AgentMessage } from "../contract/agent-message.js";
import type { AgentOutcome } from "../contract/agent-outcome.js";
import { computeContractHash } from "../contract/contract-hash.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { canonicalJson } from "../foundation/canonical-json.js";
import { CharterError } from "../foundation/charter-error.js";
import { deepFreeze } from "../foundation/deep-freeze.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import type { ModelErrorClass } from "../model/model-call-error.js";
import type { ModelResponse } from "../model/model-client.js";
import { adaptProtocol } from "../model/protocol-adapter.js";
import { createTokenEstimator } from "../model/token-estimator.js";
import { createSessionContext } from "../session/create-session-context.js";
import {
  type CheckpointKind,
  checkpointKindAfter,
  type SessionCheckpoint,
} from "../session/session-checkpoint.js";
import type { RunIdentity } from "../session/session-context.js";
import type {
  AttemptRecord,
  PendingQuestion,
  PreflightProblem,
  SessionEvent,
} from "../session/session-event.js";
import { sessionRules } from "../session/session-rules.js";
import type { SessionState } from "../session/session-state.js";
import { initialSessionState } from "../session/session-state.js";
import {
  contractPreflightProblems,
  startResumeTransition,
  startTransition,
  transition,
} from "../session/transition.js";
import type { TransitionOutput } from "../session/transition-output.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import { createHashChainTranscript } from "../transcript/hash-chain-transcript.js";
import type { TranscriptEntry, TranscriptHeader } from "../transcript/transcript-entry.js";
import { createFinalReportSupport } from "./final-report-support.js";
import type { ReplayDivergence, ReplayReport } from "./replay-report.js";
import {
  type LiveTools,
  type NotReExecutedCall,
  type RecordedExecution,
  replayToolCalls,
  type ToolDivergence,
} from "./replay-tool-calls.js";

/** A recorded run, from a run directory or a run store. */
export interface RecordedRun {
  readonly header: TranscriptHeader;
  readonly contract: ExecutionContract;
  readonly entries: readonly TranscriptEntry[];
  readRaw(hash: string): Promise<unknown>;
}

interface InferResult {
  readonly status: string;
  readonly failure?: {
    readonly errorClass: ModelErrorClass;
    readonly code: string;
    readonly message: string;
    readonly statusCode: number | null;
    readonly retryAfterMs: number | null;
  };
  readonly raw_response_hash: string | null;
  readonly usage?: AttemptRecord["usage"];
  readonly interrupted?: boolean;
  readonly timed_out?: "total" | "step";
}

/**
 * Replays a recorded run with no network (seed 002 Phase 3): the pure transition function is fed events rebuilt
 * from the record, and every entry it produces must hash exactly as the recorded one. Model responses are looked
 * up by the canonical hash of the request the replayed session builds (the INFER entries' `request_hash`) and
 * go through the same protocol adapter; tool results are looked up by (call id, request hash) in the recorded
 * EXECUTE entry (with live tools, the read-only and idempotent calls are also executed again and compared). A
 * request with no recorded answer, or the first entry that hashes differently, is named; otherwise the replay
 * reproduces the outcome class and the chain head.
 */
export async function replayRecordedRun(
  record: RecordedRun,
  options: { liveTools?: LiveTools } = {},
): Promise<ReplayReport> {
  const contract = deepFreeze(structuredClone(record.contract)) as ExecutionContract;
  if (computeContractHash(contract) !== record.header.contract_hash) {
    throw new CharterError(
      "TRANSCRIPT_INVALID",
      "the recorded contract does not hash to the transcript's contract hash",
      {
        details: { runId: record.header.run_id },
      },
    );
  }
  const finalReport = createFinalReportSupport(contract.output.format, contract.output.schema);
  // Who the run was for, as its PRECHECK recorded it: the replayed PRECHECK and accounting must say the same.
  const recordedIdentity = (record.entries[0]?.action as { run?: RunIdentity } | undefined)?.run;
  const context = {
    ...createSessionContext({
      contract,
      // Counted as the run was: a version-2 contract's run counted long runs of text whole.
      tokenEstimator: createTokenEstimator({ boundLongRuns: sessionRules(contract).boundedTokenEstimation }),
      validateFinalReport: finalReport.validateArguments,
      validateTextAsJsonReport: finalReport.validateText,
    }),
    ...(recordedIdentity !== undefined ? { runIdentity: recordedIdentity } : {}),
  };
  const chain = createHashChainTranscript({
    runId: record.header.run_id,
    contractHash: record.header.contract_hash,
    adapterVersion: record.header.adapter_version,
    modelProfileId: record.header.model_profile_id,
    redactor: new SecretRedactor(),
  });
  const entries = record.entries;
  const first = entries[0];
  const recordedOutcome = recordedOutcomeOf(entries);
  if (first === undefined || first.state !== "PRECHECK") {
    return report(null, chain.headHash, {
      seq: 0,
      step_id: first?.step_id ?? "",
      reason: "STATE_MISMATCH",
      detail: "the record does not start with PRECHECK",
    });
  }
  const precheckAction = first.action as { conversation: AgentMessage[]; started_at: number };
  let state = initialSessionState(
    record.header.run_id,
    precheckAction.started_at,
    precheckAction.conversation,
  );
  let output: TransitionOutput = startTransition(state);
  let position = 0;
  const toolDivergences: ToolDivergence[] = [];
  const reExecuted: string[] = [];
  const notReExecuted: NotReExecutedCall[] = [];
  const manifest = new Map(contract.tool_manifest.map((tool) => [tool.name, tool]));
  // The recorded INFER entries by request hash, in record order: a request is answered by the first recorded
  // attempt of the same request not yet used (retries of one request are several attempts).
  const inferencesByRequest = new Map<string, number[]>();
  entries.forEach((entry, index) => {
    const requestHash =
      entry.state === "INFER" ? (entry.action as { request_hash?: string }).request_hash : undefined;
    if (requestHash === undefined) return;
    const queue = inferencesByRequest.get(requestHash);
    if (queue === undefined) inferencesByRequest.set(requestHash, [index]);
    else queue.push(index);
  });
  function takeRecordedInference(requestHash: string): TranscriptEntry | undefined {
    const queue = inferencesByRequest.get(requestHash) ?? [];
    while (queue.length > 0 && (queue[0] as number) < position) queue.shift();
    const index = queue.shift();
    return index === undefined ? undefined : entries[index];
  }

  function report(
    outcome: AgentOutcome | null,
    headHash: string,
    divergence: ReplayDivergence | null,
  ): ReplayReport {
    return {
      ok: divergence === null,
      outcome,
      recordedOutcome,
      headHash,
      recordedHeadHash: entries.at(-1)?.hash ?? null,
      entries: chain.entryCount,
      divergence,
      toolDivergences,
      reExecuted,
      notReExecuted,
    };
  }

  // States at checkpoint positions (after a continuing COMMIT, before EXECUTE), by entry count: a resumed
  // session in the record starts from one of them, exactly as the resumed process restored it.
  const checkpoints = new Map<number, SessionState>();
  // RECORD entries bind what the run store kept beside the chain; the session never writes them, so the replay
  // takes them into its chain as recorded, between the session's own entries.
  function takeRecordEntries(): void {
    for (let next = entries[position]; next?.state === "RECORD"; next = entries[position]) {
      chain.append({
        state: next.state,
        step_id: next.step_id,
        turn: next.turn,
        timestamp: next.timestamp,
        action: next.action,
        result: next.result,
        model_fingerprint: next.model_fingerprint,
      });
      position++;
    }
  }
  for (;;) {
    takeRecordEntries();
    const next = entries[position];
    const resumedFrom =
      next?.state === "PRECHECK"
        ? (next.action as { resumed_from?: { entry_count: number; kind: CheckpointKind; head_hash: string } })
            .resumed_from
        : undefined;
    if (resumedFrom !== undefined && next !== undefined) {
      const restored = checkpoints.get(resumedFrom.entry_count);
      if (restored === undefined) {
        return report(
          state.outcome,
          chain.headHash,
          mismatch(
            next,
            "STATE_MISMATCH",
            `the run resumes from entry ${resumedFrom.entry_count}, not a checkpoint of the replay`,
          ),
        );
      }
      output = startResumeTransition(restored, {
        kind: resumedFrom.kind,
        entry_count: resumedFrom.entry_count,
        head_hash: resumedFrom.head_hash,
      } as SessionCheckpoint);
      state = output.state;
    }
    const effect = output.effect;
    if (effect.type === "terminate") break;
    const recorded = entries[position];
    if (recorded === undefined) {
      return report(null, chain.headHash, {
        seq: position,
        step_id: "",
        reason: "RECORD_ENDED",
        detail: `the record ends where the replay performs '${effect.type}'`,
      });
    }
    const flags = (recorded.result ?? {}) as { interrupted?: boolean; timed_out?: "total" | "step" };
    const common = {
      now: recorded.timestamp,
      interrupted: flags.interrupted === true,
      timedOut: flags.timed_out ?? null,
    };
    let event: SessionEvent;
    if (effect.type === "precheck") {
      const recordedProblems = ((recorded.result as { problems?: PreflightProblem[] }).problems ??
        []) as PreflightProblem[];
      const fromContract = new Set(
        contractPreflightProblems(context).map((problem) => canonicalJson(problem)),
      );
      event = {
        type: "precheck_completed",
        ...common,
        problems: recordedProblems.filter((problem) => !fromContract.has(canonicalJson(problem))),
      };
    } else if (effect.type === "infer") {
      if (recorded.state !== "INFER")
        return report(
          null,
          chain.headHash,
          mismatch(recorded, "STATE_MISMATCH", `the replay infers; the record has ${recorded.state}`),
        );
      const recordedRequestHash = (recorded.action as { request_hash?: string }).request_hash;
      // A record written before requests were hashed has no request_hash: it can only be replayed in order.
      const answering =
        recordedRequestHash === undefined ? recorded : takeRecordedInference(effect.requestHash);
      if (answering === undefined) {
        return report(null, chain.headHash, {
          ...mismatch(
            recorded,
            "REQUEST_MISMATCH",
            "the request the replay builds has no recorded response (its request hash is not in the record)",
          ),
          details: {
            recordedRequestHash: recordedRequestHash ?? null,
            replayedRequestHash: effect.requestHash,
          },
        });
      }
      const action = answering.action as { raw_request_hash: string | null; txn_id: string };
      const result = answering.result as InferResult;
      const target = contract.model_targets[effect.targetIndex];
      const base = {
        targetIndex: effect.targetIndex,
        provider: target?.provider ?? "unknown",
        model: target?.model ?? "unknown",
        latencyMs: 0,
        usage: result.usage ?? null,
        requestHash: recordedRequestHash === undefined ? null : effect.requestHash,
        rawRequestHash: action.raw_request_hash,
        rawResponseHash: result.raw_response_hash,
        txnId: action.txn_id,
      };
      let attempt: AttemptRecord;
      if (result.status === "failed" && result.failure !== undefined) {
        attempt = { ...base, adapterResult: null, failure: result.failure };
      } else {
        const payload = (await record.readRaw(result.raw_response_hash ?? "")) as {
          model_response: Omit<ModelResponse, "rawRequest" | "rawResponse">;
        };
        const response: ModelResponse = { ...payload.model_response, rawRequest: null, rawResponse: null };
        const adapterResult = adaptProtocol(response, {
          strict: contract.strict_mode,
          sourceModel: `${base.provider}/${base.model}`,
          adapterVersion: contract.adapter_version,
          rawHash: result.raw_response_hash ?? "",
        });
        attempt = { ...base, adapterResult, failure: null };
      }
      event = { type: "inference_completed", ...common, attempt };
    } else {
      if (recorded.state !== "EXECUTE")
        return report(
          null,
          chain.headHash,
          mismatch(recorded, "STATE_MISMATCH", `the replay executes tools; the record has ${recorded.state}`),
        );
      const replayed = await replayToolCalls(effect.calls, effect.turn, recordedExecution(recorded), {
        manifest,
        previousTool: state.lastExecutedTool,
        live: options.liveTools ?? null,
        toolDivergences,
        notReExecuted,
        reExecuted,
      });
      if ("missing" in replayed) {
        return report(null, chain.headHash, {
          ...mismatch(
            recorded,
            "REQUEST_MISMATCH",
            `tool call '${replayed.missing.callId}' of the replay has no recorded result (its request hash is not in the record)`,
          ),
          details: {
            recordedRequestHash: replayed.missing.recordedRequestHash,
            replayedRequestHash: replayed.missing.replayedRequestHash,
            callId: replayed.missing.callId,
          },
        });
      }
      const results = replayed.results;
      const recordedResult = recorded.result as {
        pending_approvals?: string[];
        pending_questions?: PendingQuestion[];
      };
      const pendingApprovals = recordedResult.pending_approvals;
      const pendingQuestions = recordedResult.pending_questions;
      event = {
        type: "tools_completed",
        ...common,
        results,
        ...(pendingApprovals !== undefined ? { pendingApprovals } : {}),
        ...(pendingQuestions !== undefined ? { pendingQuestions } : {}),
      };
    }
    output = transition(state, event, context);
    state = output.state;
    const checkpointHere = checkpointKindAfter(output) !== null;
    for (const produced of output.entries) {
      const expected = entries[position];
      const hash = chain.append(produced);
      if (expected === undefined) {
        return report(state.outcome, chain.headHash, {
          seq: position,
          step_id: produced.step_id,
          reason: "EXTRA_ENTRIES",
          detail: "the replay produced more entries than were recorded",
        });
      }
      if (hash !== expected.hash)
        return report(state.outcome, chain.headHash, describeDivergence(expected, produced));
      position++;
    }
    if (checkpointHere) checkpoints.set(chain.entryCount, state);
  }
  takeRecordEntries();
  if (position !== entries.length) {
    return report(
      state.outcome,
      chain.headHash,
      mismatch(entries[position]!, "EXTRA_ENTRIES", "the record continues after the replay terminated"),
    );
  }
  return report(state.outcome, chain.headHash, null);
}

function mismatch(
  entry: TranscriptEntry,
  reason: ReplayDivergence["reason"],
  detail: string,
): ReplayDivergence {
  return { seq: entry.seq, step_id: entry.step_id, reason, detail };
}

function describeDivergence(
  expected: TranscriptEntry,
  produced: { state: string; action: unknown; result: unknown },
): ReplayDivergence {
  if (expected.state !== produced.state)
    return mismatch(expected, "STATE_MISMATCH", `recorded ${expected.state}, replayed ${produced.state}`);
  if (canonicalJson(expected.action) !== canonicalJson(produced.action))
    return mismatch(expected, "ACTION_MISMATCH", "the replayed action differs from the recorded one");
  if (canonicalJson(expected.result) !== canonicalJson(produced.result))
    return mismatch(expected, "RESULT_MISMATCH", "the replayed result differs from the recorded one");
  return mismatch(expected, "CHAIN_MISMATCH", "the entry's chain link differs (step id, turn or timestamp)");
}

function recordedExecution(entry: TranscriptEntry): RecordedExecution {
  return {
    calls: (entry.action as { calls?: RecordedExecution["calls"] }).calls ?? [],
    results: (entry.result as { results?: ToolExecutionResult[] }).results ?? [],
  };
}

function recordedOutcomeOf(entries: readonly TranscriptEntry[]): AgentOutcome | null {
  const last = entries.findLast((entry) => entry.state !== "RECORD");
  return last?.state === "TERMINATE" ? ((last.result as { outcome?: AgentOutcome }).outcome ?? null) : null;
}
