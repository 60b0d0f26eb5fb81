import { contextLimit } from "./context-guard.js";
import { eventFlags } from "./event-flags.js";
import { handleInference } from "./handle-inference.js";
import { observeToolResults } from "./observe-tool-results.js";
import { prepareInference } from "./prepare-inference.js";
import type { SessionCheckpoint } from "./session-checkpoint.js";
import type { SessionContext } from "./session-context.js";
import type { ObservedTimeout, PreflightProblem, SessionEvent } from "./session-event.js";
import type { SessionState } from "./session-state.js";
import { terminateSession } from "./terminate-session.js";
import { EntryCollector, type TransitionOutput } from "./transition-output.js";

/**
 * The session state machine as one pure function: (state, event) -> (next state, next effect, transcript
 * entries). It reads no clock and performs no I/O; the driver (run-session.ts) performs the effects and
 * feeds back events, so a recorded sequence of events replays to the same states (seed 002 Phase 3).
 */
export function transition(
  state: SessionState,
  event: SessionEvent,
  context: SessionContext,
): TransitionOutput {
  switch (event.type) {
    case "precheck_completed":
      return completePrecheck(state, event.now, event.interrupted, event.timedOut, event.problems, context);
    case "inference_completed":
      return handleInference(state, event, context);
    case "tools_completed": {
      const collector = new EntryCollector();
      const pendingApprovals = event.pendingApprovals ?? [];
      const executed: SessionState = {
        ...state,
        // A call waiting for approval stops the run like an interrupt: it resumes once approved or denied.
        interrupted: state.interrupted || event.interrupted || pendingApprovals.length > 0,
        timedOut: state.timedOut ?? event.timedOut,
        pendingApprovals,
      };
      collector.add(
        executed,
        "EXECUTE",
        event.now,
        {
          calls: state.callsToExecute.map((call) => ({
            arguments: call.arguments,
            id: call.id,
            name: call.name,
          })),
        },
        {
          results: event.results,
          ...eventFlags(event.interrupted, event.timedOut),
          ...(pendingApprovals.length > 0 ? { pending_approvals: pendingApprovals } : {}),
          ...(event.pendingQuestions !== undefined && event.pendingQuestions.length > 0
            ? { pending_questions: event.pendingQuestions }
            : {}),
        },
      );
      return observeToolResults(executed, event.now, event.results, context, collector);
    }
  }
}

/** The first state, before any effect: PRECHECK asks the driver for its environment checks. */
export function startTransition(state: SessionState): TransitionOutput {
  return { state, entries: [], effect: { type: "precheck" } };
}

/**
 * A resumed session (seed 003 INV-CP-002) starts with its own PRECHECK (the environment is checked again:
 * tool servers up), recorded with where it resumes from, then continues at the step after the checkpoint:
 * after a COMMIT, the next turn's inference; before EXECUTE, the same calls (the runner's tool executor
 * decides, per idempotency class, what happens to calls that were in flight when the process died).
 */
export function startResumeTransition(state: SessionState, checkpoint: SessionCheckpoint): TransitionOutput {
  const resuming = {
    kind: checkpoint.kind,
    entryCount: checkpoint.entry_count,
    headHash: checkpoint.head_hash,
  };
  return {
    state: {
      ...state,
      phase: "PRECHECK",
      resuming,
      interrupted: false,
      timedOut: null,
      pendingApprovals: [],
    },
    entries: [],
    effect: { type: "precheck" },
  };
}

function continueResumedSession(
  state: SessionState,
  now: number,
  context: SessionContext,
  collector: EntryCollector,
): TransitionOutput {
  const resumed: SessionState = { ...state, resuming: null };
  if (state.resuming?.kind === "before_execute") {
    return {
      state: { ...resumed, phase: "EXECUTE" },
      entries: collector.entries,
      effect: { type: "execute_tools", turn: state.turn, calls: state.callsToExecute },
    };
  }
  return prepareInference(
    { ...resumed, attemptInTurn: 0, turnStartedAt: now },
    now,
    context,
    collector.entries,
  );
}

/** Feasibility checks that follow from the contract alone (seed 002 Phase 2b). */
export function contractPreflightProblems(context: SessionContext): PreflightProblem[] {
  const contract = context.contract;
  const problems: PreflightProblem[] = [];
  const budget = contract.context_budget;
  if (
    budget.reserved_system + budget.reserved_synthesis + budget.max_output_tokens >=
    budget.context_window
  ) {
    problems.push({
      check: "context_feasibility",
      detail: `reserved_system (${budget.reserved_system}) + reserved_synthesis (${budget.reserved_synthesis}) + max_output_tokens (${budget.max_output_tokens}) do not fit in context_window (${budget.context_window})`,
    });
  }
  if (contextLimit(contract) <= 0) {
    problems.push({
      check: "context_feasibility",
      detail: `context limit ${contextLimit(contract)} leaves no room for the conversation`,
    });
  }
  const available = new Set(contract.tool_manifest.map((tool) => tool.name));
  for (const name of contract.allowed_tools ?? []) {
    if (!available.has(name))
      problems.push({ check: "tool_availability", detail: `allowed tool '${name}' is not available` });
  }
  return problems;
}

function completePrecheck(
  state: SessionState,
  now: number,
  interrupted: boolean,
  timedOut: ObservedTimeout,
  environmentProblems: readonly PreflightProblem[],
  context: SessionContext,
): TransitionOutput {
  const problems = [...contractPreflightProblems(context), ...environmentProblems];
  const collector = new EntryCollector();
  collector.add(
    state,
    "PRECHECK",
    now,
    state.resuming === null
      ? {
          checks: ["contract", "context_feasibility", "tool_availability", "environment"],
          contract_hash: context.contract.contract_hash,
          // The run's inputs, so that the transcript alone is enough to replay it.
          conversation: state.conversation,
          started_at: state.startedAt,
          ...(context.runIdentity != null ? { run: context.runIdentity } : {}),
        }
      : {
          checks: ["contract", "context_feasibility", "tool_availability", "environment"],
          contract_hash: context.contract.contract_hash,
          resumed_from: {
            entry_count: state.resuming.entryCount,
            head_hash: state.resuming.headHash,
            kind: state.resuming.kind,
          },
          ...(context.runIdentity != null ? { run: context.runIdentity } : {}),
        },
    { ok: problems.length === 0, problems, ...eventFlags(interrupted, timedOut) },
  );
  if (interrupted) {
    return terminateSession({ ...state, interrupted: true }, now, context, collector, {
      outcome: "INTERRUPTED",
      predicate: "interrupt",
      error: { code: "INTERRUPTED", message: "the run was interrupted before the first inference" },
      reason: "interrupted",
    });
  }
  if (problems.length > 0) {
    const serverProblem = problems.some((problem) => problem.check === "tool_servers");
    return terminateSession(state, now, context, collector, {
      outcome: "FAILED_PREFLIGHT",
      predicate: "preflight",
      error: {
        code: serverProblem ? "MCP_SERVER_FAILED" : "PREFLIGHT_FAILED",
        message: problems.map((problem) => `${problem.check}: ${problem.detail}`).join("; "),
      },
      reason: "preflight_failed",
    });
  }
  if (state.resuming !== null) return continueResumedSession(state, now, context, collector);
  return prepareInference({ ...state, turn: 1, turnStartedAt: now }, now, context, collector.entries);
}
