import type { AgentMessage } from "../contract/agent-message.js";
import { chooseAttemptTarget } from "../model/choose-attempt-target.js";
import { exceedsContextLimit } from "./context-guard.js";
import { isReportOnlyLastTurn, isTokenGateClosed } from "./final-turn.js";
import { messagesHash, modelRequestHash } from "./model-request-hash.js";
import { retryNotices } from "./retry-notices.js";
import type { SessionContext } from "./session-context.js";
import type { SessionState } from "./session-state.js";
import type { TransitionOutput } from "./transition-output.js";

/**
 * Builds the next model attempt: picks the target round-robin (seed 000 §5) around rate-limited targets,
 * decides whether this is a forced final turn (context guard), computes the request metrics and any rate-limit
 * wait.
 */
export function prepareInference(
  state: SessionState,
  now: number,
  context: SessionContext,
  entries: TransitionOutput["entries"],
): TransitionOutput {
  const contract = context.contract;
  const attempt = state.attemptInTurn + 1;
  // Round-robin from targets[(N-1) % n], skipping targets inside their rate-limit window while another is free;
  // a wait only when every target is limited, until the first window ends.
  const { targetIndex, waitMilliseconds } = chooseAttemptTarget({
    targetCount: contract.model_targets.length,
    attempt,
    limitedUntil: state.rateLimitedUntil,
    now,
  });

  let forced = state.forcedFinalTurn;
  let forcedReason = state.forcedFinalReason;
  const noticeTokens = sumTokens(state.retryNotices, context);
  const allTools = context.toolSpecs(false);
  const allSchemaTokens = context.countTools(allTools);
  if (
    !forced &&
    exceedsContextLimit(
      contract,
      { ...state.counters, pendingCtxTokens: noticeTokens, schemaCtxTokens: allSchemaTokens },
      0,
      state.tokenCalibration,
    )
  ) {
    forced = true;
    forcedReason = "The context window is nearly full.";
  }
  // The last allowed turn offers only final_report too (not a forced turn: no report there is max_turns_exhausted).
  const reportOnly = forced || isReportOnlyLastTurn(state, context);
  const tools = reportOnly ? context.toolSpecs(true) : allTools;
  const schemaCtxTokens = reportOnly ? context.countTools(tools) : allSchemaTokens;

  let notices = state.retryNotices;
  if (forced) notices = [...notices, retryNotices.forcedFinal(forcedReason ?? "")];
  else if (state.turn === contract.max_inferences && contract.max_inferences > 1) {
    notices = [...notices, retryNotices.finalTurn(state.turn, contract.max_inferences)];
  }
  const pendingCtxTokens = notices === state.retryNotices ? noticeTokens : sumTokens(notices, context);
  const messages = notices.length === 0 ? state.conversation : [...state.conversation, ...notices];
  const ctxTokens = state.counters.currentCtxTokens;
  const target = contract.model_targets[targetIndex];
  const tokenGateClosed = isTokenGateClosed(state, context);
  const toolChoice = reportOnly || tokenGateClosed ? "required" : "auto";

  // The conversation's running hash is carried in the state; notices (never committed) are hashed on top of it.
  const conversationHash = messagesHash(state.conversation, state.conversationHash ?? null);

  const next: SessionState = {
    ...state,
    conversationHash,
    phase: "INFER",
    attemptInTurn: attempt,
    forcedFinalTurn: forced,
    forcedAtTurn: forced ? state.turn : state.forcedAtTurn,
    forcedFinalReason: forcedReason,
    counters: { currentCtxTokens: ctxTokens, pendingCtxTokens, schemaCtxTokens },
  };
  return {
    state: next,
    entries,
    effect: {
      type: "infer",
      turn: state.turn,
      attempt,
      targetIndex,
      messages,
      tools,
      toolChoice,
      textHeld: tokenGateClosed,
      requestHash: modelRequestHash(
        {
          provider: target?.provider ?? "unknown",
          model: target?.model ?? "unknown",
          // The parameters performInference sends: the target's own, else the contract's.
          parameters: target?.request_parameters ?? contract.request_parameters,
          toolChoice,
          tools,
          messages,
        },
        conversationHash,
      ),
      waitMilliseconds,
      metrics: {
        ctx_tokens: ctxTokens,
        pending_ctx_tokens: pendingCtxTokens,
        schema_ctx_tokens: schemaCtxTokens,
        expected_tokens: ctxTokens + pendingCtxTokens + schemaCtxTokens,
      },
    },
  };
}

function sumTokens(messages: readonly AgentMessage[], context: SessionContext): number {
  let total = 0;
  for (const message of messages) total += context.countMessage(message);
  return total;
}
