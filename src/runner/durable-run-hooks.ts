import type { AgentOutcome } from "../contract/agent-outcome.js";
import type { AccountingEntry } from "../session/accounting-entry.js";
import { accountingTotals } from "../session/accounting-totals.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { SessionCheckpoint } from "../session/session-checkpoint.js";
import { deltaSessionCheckpoint, type SessionCheckpointDelta } from "../session/session-checkpoint-delta.js";
import type { ToolCallExecutor } from "../session/session-dependencies.js";
import type { ToolResultInput } from "../store/commit-batch.js";
import type { StoppedRunStatus } from "../store/run-record.js";
import type { RunStore } from "../store/run-store.js";
import type { StoreTranscriptWriter } from "../store/store-transcript-writer.js";
import { toolRequestHash } from "../store/tool-request-hash.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";

/** How a stored run is invoked again on resume: the agent file, configuration and overrides it ran with. */
export interface RunInvocation {
  readonly agent_path: string;
  readonly config_path: string | null;
  readonly cwd: string;
  readonly set: readonly string[];
}

/**
 * Every how many checkpoints one is stored whole rather than as a delta from the previous one: bounds how
 * many stored checkpoints a resume reads back (see session-checkpoint-delta.ts).
 */
export const wholeCheckpointInterval = 32;

/**
 * What makes a run durable in a run store (issue "Durable runs"): at every continuing COMMIT and before tools
 * execute, the checkpoint (with the accounting since the last one and the run's totals) in ONE transaction
 * with the transcript entries it covers; each tool result durable before the next call starts, or with the
 * checkpoint that follows the turn's last call; and the run's end with its outcome.
 *
 * Checkpoints are stored as deltas from the previous one (only the messages and accounting entries added),
 * one in `wholeCheckpointInterval` whole; `loadSessionCheckpoint` reads them back.
 */
export function createDurableRunHooks(options: {
  readonly store: RunStore;
  readonly writer: StoreTranscriptWriter;
  readonly runId: string;
  readonly invocation: RunInvocation;
  /** The checkpoint a resumed run continues from: the accounting it holds is stored already. */
  readonly resumedFrom?: SessionCheckpoint;
  /**
   * Results a resumed run answers calls with from the store (the calls completed before the process stopped): the
   * very objects the executor returns for them, which are stored already and must not be stored twice.
   */
  readonly storedResults?: readonly ToolExecutionResult[];
}) {
  const { store, writer, runId } = options;
  const storedResults = new WeakSet<ToolExecutionResult>(options.storedResults ?? []);
  let accountingCommitted = options.resumedFrom?.state.accounting.length ?? 0;
  let previous: { readonly checkpoint: SessionCheckpoint; readonly seq: number } | null = null;
  let deltasSinceWhole = 0;
  // Results of calls that completed, not yet stored: stored before the next call starts, or in the next
  // checkpoint's transaction (or the run's last one). Between a call's end and that transaction the session only
  // computes (OBSERVE, COMMIT), so a process dying there leaves the call looking in flight, exactly as dying
  // during the call would: a resumed run re-runs it only when read-only or idempotent. One transaction per
  // turn is saved that way.
  let unstoredResults: ToolResultInput[] = [];

  function takeUnstoredResults(): { toolResults?: ToolResultInput[] } {
    if (unstoredResults.length === 0) return {};
    const toolResults = unstoredResults;
    unstoredResults = [];
    return { toolResults };
  }

  function encode(checkpoint: SessionCheckpoint): SessionCheckpoint | SessionCheckpointDelta {
    const delta =
      previous !== null && deltasSinceWhole < wholeCheckpointInterval - 1
        ? deltaSessionCheckpoint(previous.checkpoint, previous.seq, checkpoint)
        : null;
    deltasSinceWhole = delta === null ? 0 : deltasSinceWhole + 1;
    return delta ?? checkpoint;
  }

  return {
    async checkpoint(checkpoint: SessionCheckpoint): Promise<void> {
      const accounting = checkpoint.state.accounting;
      const added = accounting.slice(accountingCommitted) as AccountingEntry[];
      accountingCommitted = accounting.length;
      const receipt = await writer.commit({
        checkpoint: { ...encode(checkpoint), invocation: options.invocation },
        accounting: added,
        totals: totalsOf(checkpoint.state.accounting, checkpoint.state.turn, checkpoint.state.toolsUsed),
        ...takeUnstoredResults(),
      });
      previous = { checkpoint, seq: receipt.checkpointSeq };
    },
    wrapToolExecutor(executor: ToolCallExecutor): ToolCallExecutor {
      return async (call, context) => {
        // Durable before this call starts: the entries so far and the previous call's result. Taken off the
        // queue only once stored, so that a failed write leaves them for the next checkpoint.
        if (unstoredResults.length > 0) {
          await writer.flush();
          await store.appendCommit({ runId, toolResults: unstoredResults });
          unstoredResults = [];
        }
        const result = await executor(call, context);
        // Every other answer is stored, those a resume guard gives without running the call (outcome unknown,
        // denied) included: a later resume must see this call answered, or it would take it for the one in flight.
        if (result.error_code === "APPROVAL_REQUIRED" || storedResults.has(result)) return result;
        unstoredResults.push({
          turn: context.turn,
          callId: call.id,
          toolName: call.name,
          server: result.source.server,
          requestHash: toolRequestHash({
            server: result.source.server,
            tool: result.source.tool,
            arguments: call.arguments,
          }),
          status: result.status,
          errorCode: result.error_code,
          result,
        });
        return result;
      };
    },
    async finish(result: AIAgentResult): Promise<void> {
      const approval = result.error?.code === "APPROVAL_REQUIRED";
      await writer.finish({
        status: statusOf(result.outcome, result.success, approval),
        outcome: result.outcome,
        errorCode: result.error?.code ?? null,
        statusReason: approval ? "approval_required" : null,
        finalReport: result.finalReport,
        accounting: result.accounting.slice(accountingCommitted) as AccountingEntry[],
        totals: totalsOf(result.accounting, result.turns, result.toolsUsed),
        ...takeUnstoredResults(),
      });
    },
  };
}

function statusOf(outcome: AgentOutcome, success: boolean, approval: boolean): StoppedRunStatus {
  if (approval) return "awaiting_approval";
  if (success) return "completed";
  return outcome === "INTERRUPTED" ? "interrupted" : "failed";
}

function totalsOf(accounting: readonly AccountingEntry[], turns: number, toolsUsed: readonly string[]) {
  const totals = accountingTotals(accounting);
  return { turns, tokensIn: totals.input, tokensOut: totals.output, costUsd: totals.costUsd ?? 0, toolsUsed };
}
