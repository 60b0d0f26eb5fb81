import type { AgentOutcome } from "../contract/agent-outcome.js";
import type { AgentSelectionRecord } from "../contract/agent-selection-record.js";
import { CharterError } from "../foundation/charter-error.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
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
import { idempotencyClassOf, type ToolCallGuardOptions } from "./guard-tool-calls.js";
import type { ToolPermissionClass } from "./tool-permissions.js";

/** How a stored run is invoked again on resume: the agent file, configuration and overrides it ran with. */
export interface RunInvocation {
  /** The agent file, or the id of a built-in agent (which has no file). */
  readonly agent_path: string;
  readonly config_path: string | null;
  readonly cwd: string;
  readonly set: readonly string[];
  /**
   * How the agent was chosen when a selector chose it (`charter run auto`): resume runs the same agent under the
   * same recorded selection, whatever the registry holds by then. Absent otherwise (and in runs recorded before).
   */
  readonly agent_selection?: AgentSelectionRecord;
  /**
   * What the run may do with tools, when it was started with limits (a server run: its caller's role). A resume
   * applies them again, whoever resumes the run. Absent: no limits (and in runs recorded before).
   */
  readonly tool_permissions?: {
    readonly allowed_classes: readonly ToolPermissionClass[];
    readonly pre_approved_tools_allowed: boolean;
  };
  /**
   * How many messages of an earlier conversation precede the prompt (a server's `conversationId`): the prompt a
   * resume chooses abilities by is the user message after them. Absent: none.
   */
  readonly history_messages?: number;
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
 * A turn whose calls are all read-only or idempotent (`tools`) may run twice, so its `before_execute`
 * checkpoint need not precede its calls: it is written as soon as a call waits (at the event loop's next pass
 * after the call starts, typically while the call's I/O is in flight), or else with the checkpoint that
 * follows, in one transaction instead of two. A process dying before it is written resumes from the previous
 * checkpoint and asks the model again; one dying after re-runs the call, as for any read-only call in flight.
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
  /**
   * The run's tools and the names configured destructive, as the call guard takes them: they tell which calls
   * may run again. Without them every call is taken as not idempotent (its turn is recorded before it runs).
   */
  readonly tools?: Pick<ToolCallGuardOptions, "manifest" | "destructiveTools">;
  /**
   * Redacts registered secrets from each record before it is written. The session already sees redacted data (see
   * prepare-agent.ts); this keeps the store clean of anything that reached a record some other way (an invocation's
   * `--set` value, say).
   */
  readonly redactor?: SecretRedactor;
}) {
  const { writer, runId } = options;
  const redact = <T>(value: T): T =>
    options.redactor === undefined ? value : (options.redactor.redactSecrets(value) as T);
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
  const byName = new Map((options.tools?.manifest ?? []).map((tool) => [tool.name, tool]));
  const destructive = new Set(options.tools?.destructiveTools ?? []);
  // The `before_execute` checkpoint of a turn whose calls may all run again, not yet written (see above).
  let deferredIntent: SessionCheckpoint | null = null;

  function mayRunAgain(toolName: string): boolean {
    const idempotency = idempotencyClassOf(byName.get(toolName), destructive);
    return idempotency === "read_only" || idempotency === "idempotent";
  }

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

  async function writeCheckpoint(checkpoint: SessionCheckpoint): Promise<void> {
    const accounting = checkpoint.state.accounting;
    const added = accounting.slice(accountingCommitted) as AccountingEntry[];
    accountingCommitted = accounting.length;
    const receipt = await asRunConflict(
      runId,
      writer.commit({
        checkpoint: redact({ ...encode(checkpoint), invocation: options.invocation }),
        accounting: added,
        totals: totalsOf(checkpoint.state.accounting, checkpoint.state.turn, checkpoint.state.toolsUsed),
        ...takeUnstoredResults(),
      }),
    );
    previous = { checkpoint, seq: receipt.checkpointSeq };
  }

  function writeDeferredIntent(): Promise<void> {
    const intent = deferredIntent;
    deferredIntent = null;
    return intent === null ? Promise.resolve() : writeCheckpoint(intent);
  }

  /** Runs a call of a turn whose record is deferred: at once, the record written if the call waits. */
  async function runWhileRecording(run: () => Promise<ToolExecutionResult>): Promise<ToolExecutionResult> {
    let written: Promise<void> | null = null;
    // A check-phase callback: it runs once the call's synchronous part is done and it waits, typically before the
    // I/O it waits for completes.
    const timer = setImmediate(() => {
      written = writeDeferredIntent();
      // Awaited below once the call settles; a failure meanwhile must not count as unhandled.
      written.catch(() => undefined);
    });
    try {
      return await run();
    } finally {
      clearImmediate(timer);
      if (written !== null) await written;
    }
  }

  return {
    checkpoint(checkpoint: SessionCheckpoint): Promise<void> {
      // A later checkpoint holds everything a deferred one would have: the deferred one is never written.
      deferredIntent = null;
      if (
        checkpoint.kind === "before_execute" &&
        byName.size > 0 &&
        checkpoint.state.callsToExecute.every((call) => mayRunAgain(call.name))
      ) {
        deferredIntent = checkpoint;
        return Promise.resolve();
      }
      return writeCheckpoint(checkpoint);
    },
    wrapToolExecutor(executor: ToolCallExecutor): ToolCallExecutor {
      return async (call, context) => {
        // Durable before this call starts: the entries so far and the previous call's result. Taken off the
        // queue only once stored, so that a failed write leaves them for the next checkpoint. Not while the
        // turn's record is deferred: every call of such a turn may run again anyway.
        if (unstoredResults.length > 0 && deferredIntent === null) {
          // With the entries so far and the RECORD entry binding them, in one transaction.
          await asRunConflict(runId, writer.storeToolResults(unstoredResults));
          unstoredResults = [];
        }
        const result =
          deferredIntent === null
            ? await executor(call, context)
            : await runWhileRecording(() => executor(call, context));
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
          result: redact(result),
        });
        return result;
      };
    },
    async finish(result: AIAgentResult): Promise<void> {
      // The run's last transaction holds every entry: a deferred checkpoint would add nothing.
      deferredIntent = null;
      // The session stopped because another process holds the run: nothing of this one may be stored.
      if (result.error?.code === "RUN_CONFLICT") return;
      const approval = result.error?.code === "APPROVAL_REQUIRED";
      await asRunConflict(
        runId,
        writer.finish({
          status: statusOf(result.outcome, result.success, approval),
          outcome: result.outcome,
          errorCode: result.error?.code ?? null,
          statusReason: approval ? "approval_required" : null,
          finalReport: redact(result.finalReport),
          accounting: result.accounting.slice(accountingCommitted) as AccountingEntry[],
          totals: totalsOf(result.accounting, result.turns, result.toolsUsed),
          ...takeUnstoredResults(),
        }),
      );
    },
  };
}

/**
 * A store write refused because the stored run is no longer where this process left it (another process
 * appended to it, or stopped it: two resumes of one run, or a resume of a run whose process was still alive)
 * becomes RUN_CONFLICT. The store reports such a refusal as a caller's mistake (ARGUMENT_INVALID,
 * `chain_mismatch` or `run_not_running`); for a running session it is the other process's turn, and nothing of
 * this one was stored.
 */
async function asRunConflict<T>(runId: string, write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    const reason = CharterError.isInstance(error) ? error.details.reason : undefined;
    if (reason !== "chain_mismatch" && reason !== "run_not_running") throw error;
    throw new CharterError(
      "RUN_CONFLICT",
      `run ${runId} was continued or stopped by another process: this one stopped without storing anything more`,
      { details: { runId, reason }, cause: error },
    );
  }
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
