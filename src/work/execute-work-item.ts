import { writeFile } from "node:fs/promises";
import { homedir, hostname } from "node:os";
import { join, resolve } from "node:path";
import { createAgentCatalog } from "../agents/create-agent-catalog.js";
import { isAgentIdReference } from "../config/agent-reference.js";
import type { ConfigurationOverlay } from "../config/load-configuration.js";
import { blake3Hex } from "../foundation/content-hash.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
import type { AgentCatalog } from "../runner/agent-catalog.js";
import type { ModelCallBudget } from "../runner/model-call-budget.js";
import { resumeStoredRun } from "../runner/resume-stored-run.js";
import { runAgent } from "../runner/run-agent.js";
import type { RunToolPermissions } from "../runner/tool-permissions.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { CharterEvent } from "../session/charter-event.js";
import { commitWork } from "./commit-work.js";
import { freezeWorkingTreeState } from "./freeze-working-tree.js";
import { type HeadState, readHeadState, restoreHeadState, saveIndex } from "./head-state.js";
import type { LoadedWorkItem } from "./load-work-item.js";
import { runShellCommand } from "./run-shell-command.js";
import { stateHash, workingTreeListing } from "./state-listing.js";
import { parseTestSummary } from "./test-summary.js";
import { thawWorkingTree } from "./thaw-working-tree.js";
import { admissionDenial, type WorkChange, workChange } from "./work-change.js";
import {
  acquireWorkLock,
  releaseWorkLock,
  updateWorkLock,
  type WorkLockRecord,
  workRecordFolder,
} from "./work-lock.js";
import { workCommitMessage, workPrompt } from "./work-prompt.js";
import {
  createRunFolder,
  receiptChain,
  type WorkMetrics,
  type WorkReceiptContent,
  type WorkStatus,
} from "./work-receipt.js";
import type { WorkRepository } from "./work-repository.js";
import { createWorkspaceTools } from "./workspace-tools.js";

/** How a work item's agent runs: configuration, store, signal, and what to do with an admitted change. */
export interface WorkItemExecutionOptions {
  /** Record an admitted change as one commit on the current branch (or the detached HEAD). */
  readonly commit?: boolean;
  readonly configPath?: string;
  readonly store?: string;
  readonly runsDirectory?: string;
  readonly homeDirectory?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly environment: RuntimeEnvironment;
  /** Ends the item (rolled back, `failure`, error `interrupted`). */
  readonly signal?: AbortSignal;
  /** Who the item is for: its run and its receipt are stored for this tenant. */
  readonly tenantId?: string;
  /** The agent registry an `agent_id` that is an id is resolved in; default the configuration's. */
  readonly agentCatalog?: AgentCatalog;
  /**
   * Where the agent's run finds its configuration layers and registry (a server's directory, so that its
   * configuration and agents apply, never the repository's); default the repository's top folder. The workspace
   * tools and the test command work in the repository either way.
   */
  readonly agentDirectory?: string;
  /** A configuration layer over every other for the agent's run (a server's tenant's providers and models). */
  readonly configurationOverlay?: ConfigurationOverlay;
  /** What the item's agent may do with tools (a server's caller's role; deletes always wait for a human). */
  readonly toolPermissions?: RunToolPermissions;
  /** Asked before every model call of the item's agent (a server's tenant budgets). */
  readonly modelCallBudget?: ModelCallBudget;
  /** Told once the before snapshot is taken and the lock record written, before the agent starts. */
  readonly onFrozen?: (runId: string, beforeHash: string) => void;
}

export interface WorkItemExecution {
  readonly loaded: LoadedWorkItem;
  /** The working tree the agent changes. */
  readonly repository: WorkRepository;
  /**
   * The working tree whose `.charter/work` gets the item's run folder and whose receipt chain decides duplicates:
   * the same as `repository` for `work run`, the user's working tree for an item of a plan (run in a worktree).
   */
  readonly receipts: WorkRepository;
  readonly runId: string;
  readonly options: WorkItemExecutionOptions;
}

/** What an item did, before its receipt takes its place in the chain. */
export interface ExecutedWorkItem {
  readonly content: WorkReceiptContent;
  /** The run folder, `.charter/work/<run-id>/` of the receipts' working tree. */
  readonly folder: string;
  /** The test command's output (redacted, bounded), also in the run folder's `test-output.txt`. */
  readonly testOutput: string | null;
}

interface Frozen {
  readonly commit: string;
  readonly hash: string;
  readonly head: HeadState;
  readonly index: string | null;
}

// Charter's own tools are not the agent's operations on the repository.
const builtInTools = new Set(["final_report", "tool_output"]);
const maxTestOutputBytes = 64 * 1024;

/**
 * Runs one work item atomically in a git working tree: lock, freeze, the agent (under the item's limits), admission,
 * the test gate, then either the change stays (and, with `commit`, becomes one commit) or the working tree is
 * thawed back to the before snapshot. `finish` gets what happened while the lock is still held (it writes the
 * receipt, or keeps it for later), so a process killed at any point leaves a record `work recover` can act on.
 */
export async function executeWorkItem<T>(
  execution: WorkItemExecution,
  finish: (executed: ExecutedWorkItem) => Promise<T>,
  /**
   * Given (a server's items): a call of the agent that waits for a person's decision stops the item instead of
   * failing it. The lock stays held, the working tree stays as the agent left it, no receipt is written, and this
   * is answered; `continueWorkItem` goes on once a person decided.
   */
  awaitingApproval?: () => Promise<T>,
): Promise<T> {
  const { loaded, repository, runId, options } = execution;
  const { item } = loaded;
  const record: WorkLockRecord = {
    format: "charter-work-lock/1",
    run_id: runId,
    pid: process.pid,
    host: hostname(),
    started_at: new Date(options.environment.now()).toISOString(),
    work_item: item,
    work_item_hash: loaded.hash,
    agent_id: item.agent_id,
    // Where runAgent writes the run directory (its own default when none is given).
    runs_directory:
      options.runsDirectory !== undefined
        ? resolve(options.runsDirectory)
        : join(options.homeDirectory ?? homedir(), ".charter", "runs"),
  };
  await acquireWorkLock(repository, record);
  let frozen: Frozen;
  let folder: string;
  try {
    folder = await createRunFolder(execution.receipts, runId);
    const recordFolder = await workRecordFolder(repository, runId);
    const head = await readHeadState(repository);
    const indexCopy = join(recordFolder, "index");
    const hasIndex = await saveIndex(repository, indexCopy);
    const { commit, listing } = await freezeWorkingTreeState(
      repository,
      `refs/charter/snapshots/${runId}/before`,
      `charter work ${item.id}: before (run ${runId})`,
    );
    const hash = stateHash(listing);
    frozen = { commit, hash, head, index: hasIndex ? indexCopy : null };
    await updateWorkLock(repository, {
      ...record,
      before: { commit, hash, head, index_copy: frozen.index },
    });
  } catch (error) {
    // Nothing has changed yet: the lock goes, the error stands.
    await releaseWorkLock(repository, runId);
    throw error;
  }
  options.onFrozen?.(runId, frozen.hash);
  return finishFrozen(execution, folder, frozen, { record, finish, awaitingApproval });
}

/** An item's frozen state as its lock record holds it (a continued item's). */
export interface FrozenWorkItem {
  readonly commit: string;
  readonly hash: string;
  readonly head: HeadState;
  readonly index: string | null;
}

/**
 * Runs (or continues) the frozen item's agent and what follows, then gives the result to `finish`, releasing the
 * lock, or, when the agent waits for a person and `awaitingApproval` is given, keeps the lock and answers that.
 */
export async function finishFrozen<T>(
  execution: WorkItemExecution,
  folder: string,
  frozen: FrozenWorkItem,
  how: {
    readonly record: WorkLockRecord;
    readonly finish: (executed: ExecutedWorkItem) => Promise<T>;
    readonly awaitingApproval?: (() => Promise<T>) | undefined;
    /** A continued item: the decisions its agent run goes on with, and where its earlier part left the counts. */
    readonly continued?: ContinuedWorkItem;
  },
): Promise<T> {
  const { repository, runId } = execution;
  let keepLock = false;
  try {
    const executed = await executeFrozen(execution, folder, frozen, how);
    if (executed === "awaiting_approval" && how.awaitingApproval !== undefined) {
      keepLock = true;
      return await how.awaitingApproval();
    }
    return await how.finish(executed as ExecutedWorkItem);
  } finally {
    if (!keepLock) await releaseWorkLock(repository, runId);
  }
}

/** How a work item that waited for a person goes on: the decisions, and what its agent had done before. */
export interface ContinuedWorkItem {
  readonly approve: readonly string[];
  readonly deny: readonly string[];
}

async function executeFrozen(
  execution: WorkItemExecution,
  folder: string,
  frozen: Frozen,
  how: {
    readonly record: WorkLockRecord;
    readonly awaitingApproval?: unknown;
    readonly continued?: ContinuedWorkItem;
  },
): Promise<ExecutedWorkItem | "awaiting_approval"> {
  const { loaded, repository, runId, options } = execution;
  const { environment } = options;
  const { item } = loaded;
  const limits = item.constraints;
  // A continued item's time counts from its start, the wait for a person included (as its agent run's own limit).
  const started = how.continued !== undefined ? Date.parse(how.record.started_at) : environment.now();
  const elapsed = () => environment.now() - started;
  let redactor: SecretRedactor | null = null;
  const redact = (text: string) => (redactor === null ? text : redactor.redactString(text));
  const agentReference = isAgentIdReference(item.agent_id)
    ? item.agent_id
    : resolve(loaded.directory, item.agent_id);

  // max_tool_ops is a budget on the whole run: the batch that would pass it is never executed, the run stops.
  // A continued item counts on from the calls its agent had made (the call it waited on had not run).
  let executedOps = how.record.paused?.executed_ops ?? 0;
  let requestedOps = executedOps;
  let overBudget = false;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  // A tool server that fails (an MCP server that exits or cannot be reached) fails the item: what the agent did
  // with it is unknown. The run stops there. A tool error the agent can get past (a refused path, a call it makes
  // again with other input) is only data for it, as in any run: admission and the test gate judge the result.
  let failedServerTool: string | null = null;
  // The name a call was made with, by call id (an ended call's event names the tool as its source knows it).
  const calledNames = new Map<string, string>();
  const onEvent = (event: CharterEvent) => {
    if (event.type === "tool_call_started" && !builtInTools.has(event.name)) {
      calledNames.set(event.callId, event.name);
      requestedOps++;
      if (requestedOps > limits.max_tool_ops && !overBudget) {
        overBudget = true;
        stop.abort();
      }
    } else if (event.type === "tool_call_ended" && !builtInTools.has(event.name)) {
      executedOps++;
      if (event.errorCode === "MCP_SERVER_FAILED" && failedServerTool === null) {
        failedServerTool = calledNames.get(event.callId) ?? event.name;
        stop.abort();
      }
    }
  };

  let agentResult: AIAgentResult | null = null;
  let status: WorkStatus = "failure";
  let error: string | null = null;
  let denialReason: string | null = null;
  let testOutput: string | null = null;
  let tests: { passed?: number; failed?: number } = {};
  let after: { commit: string; hash: string; change: WorkChange } | null = null;
  let commit: string | null = null;
  try {
    const common = {
      agentCatalog: options.agentCatalog ?? createAgentCatalog(),
      ...(options.configurationOverlay !== undefined
        ? { configurationOverlay: options.configurationOverlay }
        : {}),
      ...(options.modelCallBudget !== undefined ? { modelCallBudget: options.modelCallBudget } : {}),
      runId,
      extraTools: createWorkspaceTools({
        repository,
        allowCommands: item.allow_commands,
        commandTimeoutMs: () => limits.timeout_ms - elapsed(),
      }),
      onEvent,
      onSecretRedactor: (runRedactor: SecretRedactor) => {
        redactor = runRedactor;
      },
      signal: stop.signal,
      ...(options.store !== undefined ? { store: options.store } : {}),
      ...(options.runsDirectory !== undefined ? { runsDirectory: resolve(options.runsDirectory) } : {}),
      ...(options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {}),
      ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
      ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
      ...(options.tenantId !== undefined ? { tenantId: options.tenantId } : {}),
      environment,
    };
    agentResult =
      how.continued !== undefined
        ? // The durable resume with a person's decisions: the run's recorded invocation and permissions apply.
          await resumeStoredRun({
            ...common,
            approve: how.continued.approve,
            deny: how.continued.deny,
          })
        : await runAgent({
            ...common,
            agentPath: agentReference,
            ...(options.toolPermissions !== undefined ? { toolPermissions: options.toolPermissions } : {}),
            prompt: workPrompt(loaded),
            cwd: options.agentDirectory ?? repository.root,
            set: [`totalTimeout=${limits.timeout_ms}ms`],
            ...(options.configPath !== undefined ? { configPath: resolve(options.configPath) } : {}),
          });
    if (
      how.awaitingApproval !== undefined &&
      agentResult.error?.code === "APPROVAL_REQUIRED" &&
      options.signal?.aborted !== true &&
      !overBudget &&
      failedServerTool === null
    ) {
      // The item waits for a person with its working tree as the agent left it; the lock record keeps the count.
      await updateWorkLock(repository, {
        ...how.record,
        before: { commit: frozen.commit, hash: frozen.hash, head: frozen.head, index_copy: frozen.index },
        paused: { executed_ops: executedOps },
      });
      options.signal?.removeEventListener("abort", onAbort);
      return "awaiting_approval";
    }
    // The state the agent left, whatever happened: admission reads the repository, not the tool calls.
    const { commit: afterCommit, listing: afterListing } = await freezeWorkingTreeState(
      repository,
      `refs/charter/snapshots/${runId}/after`,
      `charter work ${item.id}: after (run ${runId})`,
    );
    after = {
      commit: afterCommit,
      hash: stateHash(afterListing),
      change: await workChange(repository, frozen.commit, afterCommit, afterListing),
    };
    if (options.signal?.aborted === true) {
      error = "interrupted";
    } else if (overBudget) {
      status = "denied";
      denialReason = `Exceeded max tool ops: ${requestedOps} > ${limits.max_tool_ops}`;
    } else if (failedServerTool !== null) {
      error = `A tool server failed during the item: ${failedServerTool} ended MCP_SERVER_FAILED`;
    } else if (agentResult.outcome === "FAILED_TIMEOUT") {
      status = "timeout";
      error = `Timed out: the work item's timeout_ms ${limits.timeout_ms} passed during the agent's run`;
    } else if (!agentResult.success) {
      error = `The agent's run ended ${agentResult.outcome}${agentResult.error === null ? "" : `: ${agentResult.error.code}: ${agentResult.error.message}`}`;
    } else {
      const duplicate = (await receiptChain(execution.receipts)).find(
        (receipt) =>
          receipt.status === "success" &&
          receipt.work_item_hash === loaded.hash &&
          receipt.before_hash === frozen.hash &&
          receipt.after_hash === after?.hash,
      );
      denialReason = admissionDenial(after.change, executedOps, limits, duplicate?.receipt_id ?? null);
      if (denialReason !== null) {
        status = "denied";
      } else if (item.test_command !== undefined) {
        const remaining = limits.timeout_ms - elapsed();
        const result =
          remaining <= 0
            ? null
            : await runShellCommand(item.test_command, {
                cwd: repository.root,
                timeoutMs: remaining,
                maxOutputBytes: maxTestOutputBytes,
                signal: stop.signal,
              });
        testOutput = result === null ? "" : redact(result.output);
        tests = parseTestSummary(testOutput);
        if (result === null || result.timedOut) {
          status = "timeout";
          error = `Timed out: the work item's timeout_ms ${limits.timeout_ms} passed ${result === null ? "before" : "during"} the test command`;
        } else if (result.exitCode !== 0) {
          error = "Tests failed";
        } else {
          status = "success";
        }
        // What the tests wrote is not part of the change: the working tree goes back to the state admitted.
        if (status === "success") await thawWorkingTree(repository, afterCommit);
      } else {
        status = "success";
      }
    }
    if (status === "success" && options.commit === true) {
      commit = await commitWork(
        repository,
        frozen.commit,
        after.commit,
        after.change,
        workCommitMessage(item.id, agentResult),
      );
    }
  } catch (thrown) {
    status = "failure";
    error = redact(thrown instanceof Error ? thrown.message : String(thrown));
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  if (status !== "success") {
    await thawWorkingTree(repository, frozen.commit);
    await restoreHeadState(repository, frozen.head, frozen.index);
  }
  const outputHash =
    status === "success" && after !== null ? after.hash : stateHash(await workingTreeListing(repository));
  const change = after?.change ?? {
    modified: [],
    created: [],
    deleted: [],
    deltaSize: 0,
    artifactHashes: {},
  };
  const metrics: WorkMetrics = {
    execution_time_ms: elapsed(),
    tool_ops_count: executedOps,
    delta_size: change.deltaSize,
    files_touched: change.modified.length + change.created.length + change.deleted.length,
    ...(tests.passed !== undefined ? { tests_passed: tests.passed } : {}),
    ...(tests.failed !== undefined ? { tests_failed: tests.failed } : {}),
  };
  if (testOutput !== null) await writeFile(join(folder, "test-output.txt"), testOutput);
  const content: WorkReceiptContent = {
    format: "charter-work-receipt/1",
    receipt_id: environment.newId("receipt"),
    work_item_id: item.id,
    work_item: item,
    work_item_hash: loaded.hash,
    agent_id: item.agent_id,
    contract_hash: agentResult?.contractHash ?? null,
    run_id: runId,
    transcript_head: agentResult?.transcript.headHash ?? null,
    status,
    error: error === null ? null : redact(error),
    denial_reason: denialReason,
    before_hash: frozen.hash,
    before_commit: frozen.commit,
    after_hash: after?.hash ?? null,
    after_commit: after?.commit ?? null,
    output_hash: outputHash,
    modified_files: change.modified,
    created_files: change.created,
    deleted_files: change.deleted,
    artifact_hashes: change.artifactHashes,
    metrics,
    test_output_hash: testOutput === null ? null : blake3Hex(testOutput),
    commit,
    created_at: new Date(environment.now()).toISOString(),
  };
  return { content, folder, testOutput };
}
