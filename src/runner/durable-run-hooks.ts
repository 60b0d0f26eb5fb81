import type { AgentOutcome } from "../contract/agent-outcome.js";
import type { AccountingEntry } from "../session/accounting-entry.js";
import { accountingTotals } from "../session/accounting-totals.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { SessionCheckpoint } from "../session/session-checkpoint.js";
import type { ToolCallExecutor } from "../session/session-dependencies.js";
import type { StoppedRunStatus } from "../store/run-record.js";
import type { RunStore } from "../store/run-store.js";
import type { StoreTranscriptWriter } from "../store/store-transcript-writer.js";
import { toolRequestHash } from "../store/tool-request-hash.js";

/** How a stored run is invoked again on resume: the agent file, configuration and overrides it ran with. */
export interface RunInvocation {
  readonly agent_path: string;
  readonly config_path: string | null;
  readonly cwd: string;
  readonly set: readonly string[];
}

/**
 * What makes a run durable in a run store (issue "Durable runs"): at every continuing COMMIT and before tools
 * execute, the checkpoint (with the accounting since the last one and the run's totals) in ONE transaction
 * with the transcript entries it covers; each tool result as soon as the call completes, so that a resumed run
 * never executes a completed call again; and the run's end with its outcome.
 */
export function createDurableRunHooks(options: {
  readonly store: RunStore;
  readonly writer: StoreTranscriptWriter;
  readonly runId: string;
  readonly invocation: RunInvocation;
}) {
  const { store, writer, runId } = options;
  let accountingCommitted = 0;
  return {
    async checkpoint(checkpoint: SessionCheckpoint): Promise<void> {
      const accounting = checkpoint.state.accounting;
      const added = accounting.slice(accountingCommitted) as AccountingEntry[];
      accountingCommitted = accounting.length;
      await writer.commit({
        checkpoint: { ...checkpoint, invocation: options.invocation },
        accounting: added,
        totals: totalsOf(checkpoint.state.accounting, checkpoint.state.turn, checkpoint.state.toolsUsed),
      });
    },
    wrapToolExecutor(executor: ToolCallExecutor): ToolCallExecutor {
      return async (call, context) => {
        const result = await executor(call, context);
        if (result.error_code === "APPROVAL_REQUIRED") return result;
        // Durable before the next call starts: the entries so far, then this call's result.
        await writer.flush();
        await store.appendCommit({
          runId,
          toolResults: [
            {
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
            },
          ],
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
