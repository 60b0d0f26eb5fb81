import { computeCostUsd, type ModelPricing } from "../model/compute-cost.js";
import type { ModelUsage } from "../model/model-client.js";
import { rateLimitDelayMs } from "../model/rate-limit-backoff.js";
import type { LlmAccountingEntry } from "./accounting-entry.js";
import { eventFlags } from "./event-flags.js";
import { retryNotices } from "./retry-notices.js";
import { runIdentityFields } from "./run-identity-fields.js";
import type { SessionContext } from "./session-context.js";
import type { AttemptRecord } from "./session-event.js";
import type { PendingViolation, SessionState } from "./session-state.js";
import { EntryCollector, type TransitionOutput } from "./transition-output.js";
import { retryOrStop, stopTurn } from "./turn-retry.js";
import { validateCalls } from "./validate-calls.js";

/**
 * INFER: one model attempt has completed. Failed or rejected attempts are retried within the turn (they
 * count toward `max_retries`, never toward turns); an accepted response moves on to VALIDATE_CALLS.
 */
export function handleInference(
  state: SessionState,
  event: { now: number; interrupted: boolean; timedOut: SessionState["timedOut"]; attempt: AttemptRecord },
  context: SessionContext,
): TransitionOutput {
  const { attempt, now } = event;
  const contract = context.contract;
  const target = contract.model_targets[attempt.targetIndex];
  const fingerprint = target ? `${target.provider}/${target.model}` : null;
  const usage = attempt.usage;
  const consumed = usage ? usage.inputTokens + usage.outputTokens : 0;
  const adapter = attempt.adapterResult;

  const accountingEntry: LlmAccountingEntry = {
    type: "llm",
    provider: attempt.provider,
    model: attempt.model,
    status: attempt.failure === null && adapter?.status !== "rejected" ? "ok" : "failed",
    latency: attempt.latencyMs,
    tokens: {
      input: usage?.inputTokens ?? 0,
      output: usage?.outputTokens ?? 0,
      ...(usage?.reasoningTokens !== undefined ? { reasoning: usage.reasoningTokens } : {}),
      ...(usage?.cacheReadTokens !== undefined ? { cacheRead: usage.cacheReadTokens } : {}),
      ...(usage?.cacheWriteTokens !== undefined ? { cacheWrite: usage.cacheWriteTokens } : {}),
    },
    ...costOf(context.pricing[attempt.targetIndex] ?? null, usage),
    timestamp: now,
    agentId: context.agentId,
    callPath: context.callPath,
    txnId: attempt.txnId,
    ...(context.parentTxnId !== null ? { parentTxnId: context.parentTxnId } : {}),
    ...(context.originTxnId !== null ? { originTxnId: context.originTxnId } : {}),
    ...runIdentityFields(context),
    turn: state.turn,
    attempt: state.attemptInTurn,
    ...(attempt.failure
      ? {
          errorCode: attempt.failure.code,
          errorClass: attempt.failure.errorClass,
          ...(attempt.failure.statusCode !== null ? { statusCode: attempt.failure.statusCode } : {}),
        }
      : adapter?.status === "rejected" && adapter.failure_code
        ? { errorCode: adapter.failure_code }
        : {}),
  };

  let calibration = state.tokenCalibration;
  if (usage && usage.inputTokens > 0) {
    const expected =
      state.counters.currentCtxTokens + state.counters.pendingCtxTokens + state.counters.schemaCtxTokens;
    // Correct our tokenizer's estimate by what the provider counted for the same request (clamped).
    if (expected > 0) calibration = Math.min(2, Math.max(0.5, usage.inputTokens / expected));
  }

  let next: SessionState = {
    ...state,
    tokensConsumed: state.tokensConsumed + consumed,
    accounting: [...state.accounting, accountingEntry],
    tokenCalibration: calibration,
    interrupted: state.interrupted || event.interrupted,
    timedOut: state.timedOut ?? event.timedOut,
  };

  const collector = new EntryCollector();
  collector.add(
    next,
    "INFER",
    now,
    {
      attempt: state.attemptInTurn,
      raw_request_hash: attempt.rawRequestHash,
      ...(attempt.requestHash !== null ? { request_hash: attempt.requestHash } : {}),
      request_metrics: {
        ctx_tokens: state.counters.currentCtxTokens,
        expected_tokens:
          state.counters.currentCtxTokens + state.counters.pendingCtxTokens + state.counters.schemaCtxTokens,
        pending_ctx_tokens: state.counters.pendingCtxTokens,
        schema_ctx_tokens: state.counters.schemaCtxTokens,
      },
      target: fingerprint,
      txn_id: attempt.txnId,
    },
    // Keys in sorted order throughout, for the canonical JSON fast path.
    attempt.failure
      ? {
          failure: attempt.failure,
          raw_response_hash: attempt.rawResponseHash,
          status: "failed",
          ...eventFlags(event.interrupted, event.timedOut),
        }
      : {
          failure_code: adapter?.failure_code ?? null,
          message: adapter?.canonical_message ?? null,
          raw_hash: adapter?.raw_hash ?? null,
          raw_response_hash: attempt.rawResponseHash,
          recovered_call_ids: adapter?.recovered_call_ids ?? [],
          rejected_calls: adapter?.rejected_calls ?? [],
          status: adapter?.status ?? "rejected",
          usage,
          ...eventFlags(event.interrupted, event.timedOut),
        },
    { stepSuffix: `-${state.attemptInTurn}`, modelFingerprint: fingerprint },
  );

  if (next.interrupted || next.timedOut !== null) return stopTurn(next, now, context, collector, null);

  if (attempt.failure) {
    const failure = attempt.failure;
    if (failure.errorClass === "auth" || failure.errorClass === "quota") {
      return stopTurn(next, now, context, collector, {
        kind: "fatal_model_error",
        code: failure.code as "MODEL_AUTHENTICATION_FAILED",
        detail: failure.message,
      });
    }
    if (failure.errorClass === "aborted") {
      // Our own abort: an interrupt, or a step/total timeout that COMMIT will name.
      return stopTurn(next, now, context, collector, null);
    }
    if (failure.errorClass === "rate_limit") {
      const consecutive = state.consecutiveRateLimits + 1;
      const delay = rateLimitDelayMs(consecutive, failure.retryAfterMs);
      const limited = new Map(state.rateLimitedUntil);
      limited.set(attempt.targetIndex, now + delay);
      next = { ...next, consecutiveRateLimits: consecutive, rateLimitedUntil: limited };
    } else if (transientClasses.has(failure.errorClass)) {
      // Seed 000 moves to the next target at once; when the next free target is this same one (a single target,
      // or every target failing), it rests 1 s, 2 s, 4 s ... first, instead of being hit again within milliseconds.
      const limited = new Map(next.rateLimitedUntil);
      const until = now + rateLimitDelayMs(state.attemptInTurn, null);
      limited.set(attempt.targetIndex, Math.max(limited.get(attempt.targetIndex) ?? 0, until));
      next = { ...next, rateLimitedUntil: limited };
    }
    return retryOrStop(
      next,
      now,
      context,
      collector,
      null,
      exhaustedViolation(next, failure, contract.max_retries),
    );
  }

  if (adapter === null || adapter.canonical_message === null || adapter.status === "rejected") {
    const failureCode = adapter?.failure_code ?? "EMPTY_RESPONSE";
    if (
      failureCode === "MALFORMED_TOOL_ARGUMENTS" ||
      failureCode === "TOOL_ARGUMENTS_NOT_OBJECT" ||
      failureCode === "TOOL_ARGUMENTS_TOO_DEEP" ||
      failureCode === "MISSING_TOOL_NAME"
    ) {
      const used = next.formatRetriesUsed + 1;
      const detail = (adapter?.rejected_calls ?? []).map((call) => call.detail).join("; ");
      if (used > contract.max_format_retries) {
        return stopTurn({ ...next, formatRetriesUsed: used }, now, context, collector, {
          kind: "malformed_exhausted",
          detail,
        });
      }
      next = { ...next, formatRetriesUsed: used };
      return retryOrStop(
        next,
        now,
        context,
        collector,
        retryNotices.rejectedCalls(adapter?.rejected_calls ?? []),
        {
          kind: "malformed_exhausted",
          detail,
        },
      );
    }
    const notice = failureCode === "REASONING_ONLY" ? retryNotices.reasoningOnly() : retryNotices.empty();
    return retryOrStop(next, now, context, collector, notice, {
      kind: "attempts_exhausted",
      code: "MODEL_INVALID_RESPONSE",
      detail: `every attempt of turn ${state.turn} returned an unusable response (${failureCode})`,
    });
  }

  return validateCalls(next, now, context, collector, adapter.canonical_message, adapter.rejected_calls);
}

/** Failures of the connection or the provider's side, after which the same target is given a rest. */
const transientClasses: ReadonlySet<string> = new Set(["network", "timeout", "server"]);

/**
 * Why the turn stops when its last attempt failed: a run none of whose attempts ever got an HTTP answer never
 * reached its model (`MODEL_UNREACHABLE`, naming the URL and the system error), anything else exhausted its
 * attempts.
 */
function exhaustedViolation(
  state: SessionState,
  failure: NonNullable<AttemptRecord["failure"]>,
  maxRetries: number,
): PendingViolation {
  const attempts = state.accounting.filter((entry) => entry.type === "llm");
  if (attempts.every((entry) => entry.errorClass === "network")) {
    const targets = [...new Set(attempts.map((entry) => `${entry.provider}/${entry.model}`))];
    return {
      kind: "attempts_exhausted",
      code: "MODEL_UNREACHABLE",
      detail: `the model was never reached: ${attempts.length} attempt(s), none got an answer; last: ${failure.message}`,
      details: {
        targets,
        attempts: attempts.length,
        ...(failure.url !== undefined ? { url: failure.url } : {}),
        ...(failure.networkCause !== undefined ? { networkCause: failure.networkCause } : {}),
      },
    };
  }
  return {
    kind: "attempts_exhausted",
    code: "MODEL_ATTEMPTS_EXHAUSTED",
    detail: `all ${maxRetries} attempts of turn ${state.turn} failed; last: ${failure.code}: ${failure.message}`,
  };
}

function costOf(pricing: ModelPricing | null, usage: ModelUsage | null): { costUsd?: number } {
  if (pricing === null || usage === null) return {};
  const cost = computeCostUsd(pricing, usage);
  return cost === null ? {} : { costUsd: cost };
}
