import type { AgentMessage } from "../contract/agent-message.js";
import { isSuccessfulOutcome } from "../contract/agent-outcome.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { freezeToolResult, type ToolExecutionResult } from "../tools/tool-execution-result.js";
import { accountingTotals } from "./accounting-totals.js";
import type { AIAgentResult } from "./agent-result.js";
import { assertRunnableContract } from "./assert-runnable-contract.js";
import { deriveCharterEvents } from "./derive-charter-events.js";
import { performInference } from "./perform-inference.js";
import { checkpointKindAfter, createSessionCheckpoint, restoreSessionState } from "./session-checkpoint.js";
import type { SessionDependencies } from "./session-dependencies.js";
import { sessionErrorFrom } from "./session-error-from.js";
import type { ObservedTimeout, PendingQuestion, SessionEvent } from "./session-event.js";
import { initialSessionState, type SessionState } from "./session-state.js";
import type { TranscriptSink } from "./transcript-sink.js";
import { startResumeTransition, startTransition, transition } from "./transition.js";

/**
 * The driver: performs the effects the pure transition function asks for and feeds back their events.
 * It never throws: a thrown bug becomes a fatal result (INTERNAL_ERROR) instead of escaping.
 */
export async function runSession(
  dependencies: SessionDependencies,
  conversation: readonly AgentMessage[],
): Promise<{ result: AIAgentResult; state: SessionState }> {
  const { contract, context, environment, transcript } = dependencies;
  const resumeFrom = dependencies.resumeFrom;
  let state =
    resumeFrom === undefined
      ? initialSessionState(dependencies.runId, environment.now(), conversation)
      : restoreSessionState(resumeFrom);
  const userSignal = dependencies.signal;
  const timeouts = new AbortController();
  const timers: ReturnType<typeof setTimeout>[] = [];
  if (contract.total_timeout_ms !== null) {
    timers.push(setTimeout(() => timeouts.abort(), contract.total_timeout_ms).unref());
  }
  const runSignal =
    userSignal === undefined
      ? timeouts.signal
      : contract.total_timeout_ms === null
        ? userSignal
        : AbortSignal.any([userSignal, timeouts.signal]);
  const interrupted = () => userSignal?.aborted === true;
  let stepTimedOut = false;
  const timedOut = (): ObservedTimeout => (timeouts.signal.aborted ? "total" : stepTimedOut ? "step" : null);
  // Attachment bytes by payload hash: those stored by this session, then those a resumed run read back.
  const attachments = new Map<string, string>();
  const knownAttachments = dependencies.attachmentData;
  const attachmentData = (hash: string) => attachments.get(hash) ?? knownAttachments?.get(hash);

  try {
    assertRunnableContract(contract);
    let output = resumeFrom === undefined ? startTransition(state) : startResumeTransition(state, resumeFrom);
    let previous = state;
    const onEvent = dependencies.onEvent;
    let stepSignal: AbortSignal = runSignal;
    let stepTimer: ReturnType<typeof setTimeout> | null = null;
    let stepTurn = -1;
    for (;;) {
      state = output.state;
      for (const entry of output.entries) transcript.append(entry);
      dependencies.onTransition?.(state, output);
      if (onEvent !== undefined)
        for (const event of deriveCharterEvents(previous, output, contract)) onEvent(event);
      previous = state;
      const effect = output.effect;
      if (effect.type === "terminate") break;
      // Durable checkpoints (seed 003 INV-CP-001): after a COMMIT that continues, before the next inference
      // starts; and before tools execute, so that a resumed run knows which calls were in flight.
      if (dependencies.checkpoint !== undefined) {
        const kind = checkpointKindAfter(output);
        if (kind !== null) {
          await dependencies.checkpoint(
            createSessionCheckpoint(state, kind, {
              entryCount: transcript.entryCount,
              headHash: transcript.headHash,
            }),
          );
        }
      }

      // A new step (turn) gets its own timeout; without one, the run's signal serves (no per-turn allocations).
      if ((effect.type === "infer" || effect.type === "execute_tools") && effect.turn !== stepTurn) {
        stepTurn = effect.turn;
        stepTimedOut = false;
        if (stepTimer !== null) clearTimeout(stepTimer);
        if (contract.step_timeout_ms !== null) {
          const controller = new AbortController();
          stepTimer = setTimeout(() => {
            stepTimedOut = true;
            controller.abort();
          }, contract.step_timeout_ms).unref();
          timers.push(stepTimer);
          stepSignal = AbortSignal.any([runSignal, controller.signal]);
        }
      }
      const signal = stepSignal;

      let event: SessionEvent;
      switch (effect.type) {
        case "precheck": {
          const problems = dependencies.preflight ? await dependencies.preflight() : [];
          event = {
            type: "precheck_completed",
            now: environment.now(),
            interrupted: interrupted(),
            timedOut: timedOut(),
            problems,
          };
          break;
        }
        case "infer": {
          const attempt = await performInference(effect, dependencies, signal, attachmentData);
          event = {
            type: "inference_completed",
            now: environment.now(),
            interrupted: interrupted(),
            timedOut: timedOut(),
            attempt,
          };
          break;
        }
        case "execute_tools": {
          const results: ToolExecutionResult[] = [];
          const pendingApprovals: string[] = [];
          const pendingQuestions: PendingQuestion[] = [];
          let previousTool = state.lastExecutedTool;
          for (const call of effect.calls) {
            if (signal.aborted) break;
            const result = storeAttachments(
              await dependencies.executeTool(call, { signal, previousTool, turn: effect.turn }),
              transcript,
              attachments,
            );
            // A destructive call without approval: the run stops here and resumes at this EXECUTE once it is
            // approved or denied (the calls before it are not run again: their results are recorded).
            if (result.error_code === "APPROVAL_REQUIRED") {
              pendingApprovals.push(call.id);
              if (result.question !== undefined)
                pendingQuestions.push({ call_id: call.id, ...result.question });
              break;
            }
            results.push(result);
            if (result.executed) previousTool = call.name;
          }
          event = {
            type: "tools_completed",
            now: environment.now(),
            interrupted: interrupted(),
            timedOut: timedOut(),
            results,
            ...(pendingApprovals.length > 0 ? { pendingApprovals } : {}),
            ...(pendingQuestions.length > 0 ? { pendingQuestions } : {}),
          };
          break;
        }
      }
      output = transition(state, event, context);
    }
  } catch (error) {
    state = fatalState(state, error, environment.now(), transcript);
  } finally {
    for (const timer of timers) clearTimeout(timer);
  }
  return { result: buildResult(state, contract, transcript), state };
}

/**
 * Stores the bytes of a result's images and audio as raw payloads of the run (content-addressed, so the transcript
 * holds only their hashes and replay has the bytes) and keeps them in memory for the requests that follow.
 */
function storeAttachments(
  result: ToolExecutionResult,
  transcript: TranscriptSink,
  known: Map<string, string>,
): ToolExecutionResult {
  const pending = result.attachments;
  if (pending === undefined || !pending.some((attachment) => "data" in attachment)) return result;
  const stored = pending.map((attachment) => {
    if (!("data" in attachment)) return attachment;
    const { data, ...description } = attachment;
    const payloadHash = transcript.storeRaw({
      data,
      media_type: attachment.media_type,
      type: attachment.type,
    });
    known.set(payloadHash, data);
    return {
      bytes: description.bytes,
      media_type: description.media_type,
      payload_hash: payloadHash,
      type: description.type,
    };
  });
  return freezeToolResult({ ...result, attachments: stored });
}

function fatalState(
  state: SessionState,
  error: unknown,
  now: number,
  transcript: TranscriptSink,
): SessionState {
  const sessionError = sessionErrorFrom(error);
  const { code, message } = sessionError;
  const outcome = state.turn === 0 ? "FAILED_PREFLIGHT" : "FAILED_VALIDATION";
  const finalReport = {
    status: "failure" as const,
    source: "synthetic" as const,
    format: "text" as const,
    content: `The run failed with an internal error: ${message}`,
    metadata: { reason: "internal_error", code },
    ts: new Date(now).toISOString(),
  };
  const terminated: SessionState = {
    ...state,
    phase: "TERMINATE",
    outcome,
    // The details stay out of the transcript entry below, as every entry's error is a code and a message.
    error: sessionError,
    finalReport,
  };
  try {
    transcript.append({
      state: "TERMINATE",
      step_id: `turn-${state.turn}/terminate`,
      turn: state.turn,
      timestamp: now,
      action: { predicate: "internal_error" },
      result: { outcome, error: { code, message }, final_report: finalReport },
      model_fingerprint: null,
    });
  } catch {
    // The transcript itself failed; the result still reports the error.
  }
  return terminated;
}

function buildResult(
  state: SessionState,
  contract: ExecutionContract,
  transcript: TranscriptSink,
): AIAgentResult {
  const outcome = state.outcome ?? "FAILED_VALIDATION";
  const { input, output, costUsd } = accountingTotals(state.accounting);
  return {
    success: isSuccessfulOutcome(outcome) && state.error === null,
    outcome,
    finalReport: state.finalReport,
    error: state.error,
    conversation: state.conversation,
    accounting: state.accounting,
    runId: state.runId,
    contractId: contract.contract_id,
    contractHash: contract.contract_hash,
    turns: state.turn,
    toolsUsed: state.toolsUsed,
    tokens: { input, output },
    costUsd,
    transcript: { entries: transcript.entryCount, headHash: transcript.headHash, directory: null },
  };
}
