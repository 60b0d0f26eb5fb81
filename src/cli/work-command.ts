import { CharterError } from "../foundation/charter-error.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodes } from "./exit-code.js";
import { workFlags } from "./work-flags.js";
import { workRunOptions } from "./work-run-options.js";

const usage =
  "usage: charter work run <item.yaml|item.json> [--repo DIR] [--commit] [--json] | charter work plan <folder|plan.yaml> [--repo DIR] [--max-parallel N] [--json] | charter work verify <receipt-id|path> | charter work replay <receipt-id|path> [--worktree DIR] | charter work recover [--repo DIR]";

/** `charter work run|plan|verify|replay|recover`. */
export const workCommand = defineCommand({
  name: "work",
  summary:
    "Run a work item (or a plan of them) atomically on a git repository; verify receipts; recover after a crash",
  description:
    "work run freezes the repository's working tree, runs the item's agent with the workspace tools under the item's limits, admits the change (files, tool calls, lines changed, no duplicate), runs its test command, and either keeps the change (one commit with --commit) or restores the working tree exactly. Every item gets a receipt in .charter/work/<run-id>/RECEIPT.json. Exit 0 success, 1 failure or timeout, 6 denied, 4 invalid item or repository. work plan runs a folder of work item files (or a plan file with items:) as a dependency DAG, level by level: a level's items in parallel (--max-parallel, default 2), each in its own git worktree at the level's base commit, then their commits applied to the current branch in id order (a change that conflicts with an earlier one of its level ends conflict); an item whose dependency is missing or did not succeed is blocked and never runs; a dependency cycle is refused before anything runs. Exit 0 when every item succeeded, 6 when the only items that did not are denied or blocked by a denied one, else 1; 4 when the plan is refused. work verify checks a receipt's hash, its place in the repository's receipt chain and its snapshots. work replay re-runs a successful item from its before snapshot in a separate worktree, with the recorded model answers and the workspace tools live, and compares the resulting state hash with the receipt (the replay-<id>.sh script beside the receipt does this). work recover restores the working tree of an item whose process died and records its failure receipt; every work command does this first.",
  positionals: [
    { name: "run|plan|verify|replay|recover", description: "What to do." },
    {
      name: "item|plan|receipt",
      optional: true,
      description:
        "The work item file (run), a folder of work item files or a plan file (plan), or a receipt id, run id or path (verify, replay).",
    },
  ],
  flags: workFlags,
  examples: [
    "charter work run items/add-parser.yaml --commit",
    "charter work run item.json --repo ../service --json",
    "charter work plan items/ --repo ../service --max-parallel 3",
    "charter work verify receipt_1b2c...",
    "charter work recover --repo ../service",
  ],
  run: runWorkCommand,
});

async function runWorkCommand(
  positionals: readonly string[],
  values: FlagValues<typeof workFlags>,
  streams: CliStreams,
): Promise<number> {
  const [subcommand, target] = positionals;
  if (subcommand === "run" && target !== undefined) return workRun(target, values, streams);
  if (subcommand === "plan" && target !== undefined) {
    const { workPlan } = await import("./work-plan-command.js");
    return workPlan(target, values, streams);
  }
  if (subcommand === "verify" && target !== undefined) return workVerify(target, values, streams);
  if (subcommand === "recover" && target === undefined) return workRecover(values, streams);
  if (subcommand === "replay" && target !== undefined) return workReplay(target, values, streams);
  throw new CharterError("ARGUMENT_INVALID", usage, { details: { argument: "subcommand" } });
}

async function workRun(
  item: string,
  values: FlagValues<typeof workFlags>,
  streams: CliStreams,
): Promise<number> {
  const { runWorkItem } = await import("../work/run-work-item.js");
  const result = await runWorkItem({
    itemPath: item,
    ...workRunOptions(values, streams),
    commit: values.commit,
    onFrozen: (runId, beforeHash) =>
      streams.stderr.write(`charter: work run ${runId}: before state ${beforeHash}\n`),
  });
  if (values.json) streams.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    const reason = result.denial_reason ?? result.error;
    streams.stdout.write(
      `${result.status}: work item ${result.work_item_id} (run ${result.run_id})${reason === undefined ? "" : `: ${reason}`}\n` +
        `files: ${result.metrics.files_touched} touched (${result.created_files.length} created, ${result.modified_files.length} modified, ${result.deleted_files.length} deleted); tool calls ${result.metrics.tool_ops_count}; delta ${result.metrics.delta_size}\n` +
        `output hash: ${result.output_hash}\nreceipt: ${result.receipt_path}\n`,
    );
  }
  if (result.status === "success") return exitCodes.success;
  return result.status === "denied" ? exitCodes.denied : exitCodes.sessionFailure;
}

async function workVerify(
  reference: string,
  values: FlagValues<typeof workFlags>,
  streams: CliStreams,
): Promise<number> {
  const { openWorkRepository } = await import("../work/work-repository.js");
  const { recoverInterruptedWork } = await import("../work/recover-interrupted-work.js");
  const { verifyWorkReceipt } = await import("../work/verify-work-receipt.js");
  const { dirname, resolve } = await import("node:path");
  const { existsSync } = await import("node:fs");
  // A receipt path names its repository; otherwise --repo or the current directory does.
  const repository = await openWorkRepository(
    values.repo ?? (existsSync(resolve(reference)) ? dirname(resolve(reference)) : process.cwd()),
  );
  await recoverInterruptedWork(repository);
  const verification = await verifyWorkReceipt(repository, reference);
  if (values.json) {
    streams.stdout.write(
      `${JSON.stringify({ ok: verification.ok, receipt_id: verification.receipt.receipt_id, path: verification.path, problems: verification.problems })}\n`,
    );
  } else if (verification.ok) {
    streams.stdout.write(
      `receipt verified: ${verification.receipt.receipt_id} (${verification.receipt.status}), output ${verification.receipt.output_hash}\n`,
    );
  } else {
    streams.stdout.write(`receipt does not verify: ${verification.path}\n`);
    for (const problem of verification.problems) streams.stdout.write(`  - ${problem}\n`);
  }
  return verification.ok ? exitCodes.success : exitCodes.sessionFailure;
}

async function workReplay(
  reference: string,
  values: FlagValues<typeof workFlags>,
  streams: CliStreams,
): Promise<number> {
  const { openWorkRepository } = await import("../work/work-repository.js");
  const { recoverInterruptedWork } = await import("../work/recover-interrupted-work.js");
  const { replayWorkItem } = await import("../work/replay-work-item.js");
  const { resolve } = await import("node:path");
  const repositoryDirectory = values.repo ?? process.cwd();
  await recoverInterruptedWork(await openWorkRepository(repositoryDirectory));
  const replay = await replayWorkItem({
    reference,
    repository: repositoryDirectory,
    ...(values.worktree !== undefined ? { worktree: resolve(values.worktree) } : {}),
    ...(values.store !== undefined ? { store: values.store } : {}),
    ...(values.config !== undefined ? { configPath: resolve(values.config) } : {}),
    ...(values.tenant !== undefined ? { tenantId: values.tenant } : {}),
  });
  if (values["hash-only"]) {
    if (!replay.report.ok) return exitCodes.sessionFailure;
    streams.stdout.write(`${replay.actualHash}\n`);
  } else if (values.json) {
    streams.stdout.write(
      `${JSON.stringify({ ok: replay.ok, receipt_id: replay.receiptId, expected_hash: replay.expectedHash, actual_hash: replay.actualHash, divergence: replay.report.divergence, tool_divergences: replay.report.toolDivergences })}\n`,
    );
  } else {
    streams.stdout.write(
      replay.ok
        ? `replay verified: ${replay.actualHash}\n`
        : `replay mismatch: expected ${replay.expectedHash}, got ${replay.actualHash}${replay.report.divergence === null ? "" : " (the replayed run diverged from its record)"}\n`,
    );
  }
  return replay.ok ? exitCodes.success : exitCodes.sessionFailure;
}

async function workRecover(values: FlagValues<typeof workFlags>, streams: CliStreams): Promise<number> {
  const { openWorkRepository } = await import("../work/work-repository.js");
  const { recoverInterruptedWork } = await import("../work/recover-interrupted-work.js");
  const { storeWorkReceipt } = await import("../work/store-work-receipt.js");
  const { systemEnvironment } = await import("../foundation/environment.js");
  const { resolve } = await import("node:path");
  const repository = await openWorkRepository(values.repo ?? process.cwd());
  // The store the receipt goes to is also where the interrupted run is looked for (then the run directory).
  const storeOptions = {
    ...(values.store !== undefined ? { store: values.store } : {}),
    ...(values.config !== undefined ? { configPath: resolve(values.config) } : {}),
    ...(values.tenant !== undefined ? { tenantId: values.tenant } : {}),
    environment: systemEnvironment,
  };
  const recovery = await recoverInterruptedWork(
    repository,
    systemEnvironment,
    async (receipt) => {
      try {
        await storeWorkReceipt(repository, receipt, storeOptions);
      } catch (error) {
        streams.stderr.write(
          `charter: warning: receipt ${receipt.receipt_id} could not be stored in the run store: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      }
    },
    {
      ...storeOptions,
      ...(values["runs-dir"] !== undefined ? { runsDirectory: resolve(values["runs-dir"]) } : {}),
    },
  );
  if (values.json) streams.stdout.write(`${JSON.stringify(recovery)}\n`);
  else if (recovery.kind === "none") streams.stdout.write("nothing to recover\n");
  else if (recovery.kind === "running") {
    streams.stdout.write(
      `work item run ${recovery.runId} is still running (process ${recovery.pid} on ${recovery.host})\n`,
    );
  } else if (recovery.kind === "recovered") {
    streams.stdout.write(
      `recovered run ${recovery.receipt.run_id}: the working tree is back at ${recovery.receipt.output_hash}; receipt ${recovery.path}\n`,
    );
  } else {
    streams.stdout.write(
      `recovered plan ${recovery.planId}: HEAD and the working tree are back at ${recovery.commit} (its last applied item); ${recovery.receipts.length} receipt${recovery.receipts.length === 1 ? "" : "s"} written, ${recovery.worktreesRemoved.length} worktree${recovery.worktreesRemoved.length === 1 ? "" : "s"} removed\n`,
    );
    for (const { receipt, path } of recovery.receipts) {
      streams.stdout.write(
        `  ${receipt.status}: work item ${receipt.work_item_id} (run ${receipt.run_id}): ${path}\n`,
      );
    }
  }
  return exitCodes.success;
}
