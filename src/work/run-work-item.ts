import { writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { createAgentCatalog } from "../agents/create-agent-catalog.js";
import { isAgentIdReference } from "../config/agent-reference.js";
import { blake3Hex } from "../foundation/content-hash.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
import { runAgent } from "../runner/run-agent.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { CharterEvent } from "../session/charter-event.js";
import { finalReportText } from "../session/final-report.js";
import { commitWork } from "./commit-work.js";
import { freezeWorkingTreeState } from "./freeze-working-tree.js";
import { readHeadState, restoreHeadState, saveIndex } from "./head-state.js";
import { type LoadedWorkItem, loadWorkItem } from "./load-work-item.js";
import { recoverInterruptedWork } from "./recover-interrupted-work.js";
import { writeReplayScript } from "./replay-script.js";
import { runShellCommand } from "./run-shell-command.js";
import { stateHash, workingTreeListing } from "./state-listing.js";
import { storeWorkReceipt } from "./store-work-receipt.js";
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
import {
  createRunFolder,
  receiptChain,
  type WorkMetrics,
  type WorkReceipt,
  type WorkStatus,
  writeReceipt,
} from "./work-receipt.js";
import { openWorkRepository, type WorkRepository } from "./work-repository.js";
import type { WorkRunResult } from "./work-run-result.js";
import { createWorkspaceTools } from "./workspace-tools.js";

export interface RunWorkItemOptions {
  /** The work item file (YAML or JSON). */
  readonly itemPath: string;
  /** A folder inside the git working tree the item runs in. */
  readonly repository: string;
  /** Record an admitted change as one commit on the current branch. */
  readonly commit?: boolean;
  readonly configPath?: string;
  readonly store?: string;
  readonly runsDirectory?: string;
  readonly homeDirectory?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly environment?: RuntimeEnvironment;
  /** Ends the item (rolled back, `failure`, error `interrupted`). */
  readonly signal?: AbortSignal;
  /** Who the item is for: its run and its receipt are stored for this tenant. */
  readonly tenantId?: string;
  /** Told what went wrong without changing the outcome (a receipt that could not be stored in the run store). */
  readonly onWarning?: (text: string) => void;
  /** Told once the before snapshot is taken and the lock record written, before the agent starts. */
  readonly onFrozen?: (runId: string, beforeHash: string) => void;
}

// Charter's own tools are not the agent's operations on the repository.
const builtInTools = new Set(["final_report", "tool_output"]);
const maxTestOutputBytes = 64 * 1024;

/**
 * Runs one work item atomically against a git working tree: freeze, the agent (under the item's limits), admission,
 * the test gate, then either the change stays (and, with `commit`, becomes one commit) or the working tree is
 * thawed back to the before snapshot. Every item, whatever its status, ends with a receipt.
 */
export async function runWorkItem(options: RunWorkItemOptions): Promise<WorkRunResult> {
  const environment = options.environment ?? systemEnvironment;
  const loaded = await loadWorkItem(options.itemPath);
  const repository = await openWorkRepository(options.repository);
  const keepReceipt = receiptKeeper(repository, loaded, options, environment);
  await recoverInterruptedWork(repository, environment, keepReceipt);
  const { item } = loaded;
  const runId = environment.newId("run");
  const agentReference = isAgentIdReference(item.agent_id)
    ? item.agent_id
    : resolve(loaded.directory, item.agent_id);
  const record: WorkLockRecord = {
    format: "charter-work-lock/1",
    run_id: runId,
    pid: process.pid,
    host: hostname(),
    started_at: new Date(environment.now()).toISOString(),
    work_item: item,
    work_item_hash: loaded.hash,
    agent_id: item.agent_id,
  };
  await acquireWorkLock(repository, record);
  let frozen: {
    commit: string;
    hash: string;
    head: Awaited<ReturnType<typeof readHeadState>>;
    index: string | null;
  };
  let folder: string;
  try {
    folder = await createRunFolder(repository, runId);
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
  try {
    options.onFrozen?.(runId, frozen.hash);
    return await executeFrozen({
      options,
      environment,
      loaded,
      repository,
      runId,
      agentReference,
      folder,
      frozen,
      keepReceipt,
    });
  } finally {
    await releaseWorkLock(repository, runId);
  }
}

interface FrozenRun {
  readonly options: RunWorkItemOptions;
  readonly environment: RuntimeEnvironment;
  readonly loaded: LoadedWorkItem;
  readonly repository: WorkRepository;
  readonly runId: string;
  readonly agentReference: string;
  readonly folder: string;
  readonly keepReceipt: (receipt: WorkReceipt) => Promise<void>;
  readonly frozen: {
    readonly commit: string;
    readonly hash: string;
    readonly head: Awaited<ReturnType<typeof readHeadState>>;
    readonly index: string | null;
  };
}

async function executeFrozen(run: FrozenRun): Promise<WorkRunResult> {
  const { options, environment, loaded, repository, runId, frozen } = run;
  const { item } = loaded;
  const limits = item.constraints;
  const started = environment.now();
  const elapsed = () => environment.now() - started;
  let redactor: SecretRedactor | null = null;
  const redact = (text: string) => (redactor === null ? text : redactor.redactString(text));

  // max_tool_ops is a budget on the whole run: the batch that would pass it is never executed, the run stops.
  let executedOps = 0;
  let requestedOps = 0;
  let overBudget = false;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const onEvent = (event: CharterEvent) => {
    if (event.type === "tool_call_started" && !builtInTools.has(event.name)) {
      requestedOps++;
      if (requestedOps > limits.max_tool_ops && !overBudget) {
        overBudget = true;
        stop.abort();
      }
    } else if (event.type === "tool_call_ended" && !builtInTools.has(event.name)) executedOps++;
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
    agentResult = await runAgent({
      agentPath: run.agentReference,
      agentCatalog: createAgentCatalog(),
      prompt: workPrompt(loaded),
      runId,
      cwd: repository.root,
      set: [`totalTimeout=${limits.timeout_ms}ms`],
      extraTools: createWorkspaceTools({
        repository,
        allowCommands: item.allow_commands,
        commandTimeoutMs: () => limits.timeout_ms - elapsed(),
      }),
      onEvent,
      onSecretRedactor: (runRedactor) => {
        redactor = runRedactor;
      },
      signal: stop.signal,
      ...(options.configPath !== undefined ? { configPath: resolve(options.configPath) } : {}),
      ...(options.store !== undefined ? { store: options.store } : {}),
      ...(options.runsDirectory !== undefined ? { runsDirectory: resolve(options.runsDirectory) } : {}),
      ...(options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {}),
      ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
      ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
      ...(options.tenantId !== undefined ? { tenantId: options.tenantId } : {}),
      environment,
    });
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
    } else if (agentResult.outcome === "FAILED_TIMEOUT") {
      status = "timeout";
      error = `Timed out: the work item's timeout_ms ${limits.timeout_ms} passed during the agent's run`;
    } else if (!agentResult.success) {
      error = `The agent's run ended ${agentResult.outcome}${agentResult.error === null ? "" : `: ${agentResult.error.code}: ${agentResult.error.message}`}`;
    } else {
      const duplicate = (await receiptChain(repository)).find(
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
        commitMessage(item.id, agentResult),
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
  if (testOutput !== null) await writeFile(join(run.folder, "test-output.txt"), testOutput);
  const { receipt, path } = await writeReceipt(repository, run.folder, {
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
  });
  await run.keepReceipt(receipt);
  const proofScript =
    status === "success" ? await writeReplayScript(run.folder, repository.root, path, receipt) : null;
  const absolute = (paths: readonly string[]) => paths.map((path) => join(repository.root, path));
  return {
    status,
    work_item_id: item.id,
    run_id: runId,
    receipt_id: receipt.receipt_id,
    receipt_path: path,
    modified_files: absolute(change.modified),
    created_files: absolute(change.created),
    deleted_files: absolute(change.deleted),
    output_hash: outputHash,
    artifact_hashes: Object.fromEntries(
      Object.entries(change.artifactHashes).map(([path, hash]) => [join(repository.root, path), hash]),
    ),
    metrics,
    ...(testOutput !== null ? { test_output: testOutput } : {}),
    ...(proofScript !== null ? { proof_script: proofScript } : {}),
    ...(receipt.error !== null ? { error: receipt.error } : {}),
    ...(denialReason !== null ? { denial_reason: denialReason } : {}),
  };
}

/** Stores each receipt in the run store too; a store that cannot be written is a warning, never the outcome. */
function receiptKeeper(
  repository: WorkRepository,
  loaded: LoadedWorkItem,
  options: RunWorkItemOptions,
  environment: RuntimeEnvironment,
): (receipt: WorkReceipt) => Promise<void> {
  return async (receipt) => {
    try {
      await storeWorkReceipt(repository, receipt, {
        ...(options.store !== undefined ? { store: options.store } : {}),
        ...(options.configPath !== undefined ? { configPath: resolve(options.configPath) } : {}),
        promptDirectory: loaded.directory,
        ...(options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {}),
        ...(options.processEnvironment !== undefined
          ? { processEnvironment: options.processEnvironment }
          : {}),
        ...(options.tenantId !== undefined ? { tenantId: options.tenantId } : {}),
        environment,
      });
    } catch (error) {
      options.onWarning?.(
        `receipt ${receipt.receipt_id} is in ${join(repository.root, ".charter", "work", receipt.run_id)} but could not be stored in the run store: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };
}

/** The agent's task: the description, then what the item names, in a fixed order (the prompt is hashed). */
function workPrompt(loaded: LoadedWorkItem): string {
  const { item } = loaded;
  const lines = [
    `Work item ${item.id}: ${item.description}`,
    "",
    "The repository is your workspace: read and change it only with the workspace__ tools (paths relative to its top folder).",
  ];
  if (item.input_files !== undefined) lines.push(`Input files: ${item.input_files.join(", ")}`);
  if (item.output_files !== undefined) lines.push(`Expected output files: ${item.output_files.join(", ")}`);
  if (item.test_command !== undefined) lines.push(`The change must pass: ${item.test_command}`);
  lines.push(
    `Limits: at most ${item.constraints.max_files} files touched, ${item.constraints.max_tool_ops} tool calls, ${item.constraints.max_delta_size} lines changed.`,
  );
  return lines.join("\n");
}

function commitMessage(id: string, result: AIAgentResult | null): string {
  const report = result?.finalReport;
  const text = report === null || report === undefined ? "" : finalReportText(report);
  const first =
    text
      .split("\n")
      .find((line) => line.trim() !== "")
      ?.trim() ?? "";
  return first === "" ? id : `${id}: ${first}`;
}
