import { executionContractSchema } from "../contract/execution-contract.js";
import { CharterError } from "../foundation/charter-error.js";
import type { RunStore } from "../store/run-store.js";
import type { TranscriptEntry } from "../transcript/transcript-entry.js";
import { assertRunUntampered } from "./assert-run-untampered.js";
import type { RunInvocation } from "./durable-run-hooks.js";
import { createLiveToolExecutor } from "./live-tool-executor.js";
import { replayRecordedRun } from "./replay-recorded-run.js";
import type { ReplayReport } from "./replay-report.js";
import type { LiveTools } from "./replay-tool-calls.js";

/** `charter replay <run-id>` over the run store: the stored entries and raw payloads, replayed offline. */
export async function replayStoredRun(
  store: RunStore,
  runId: string,
  options: {
    liveTools?: boolean;
    /** Tools the caller started itself (`charter work replay`: the workspace tools on a fresh worktree). */
    live?: LiveTools;
  } = {},
): Promise<ReplayReport> {
  const run = await store.getRun(runId);
  if (run === null)
    throw new CharterError("RUN_NOT_FOUND", `no run ${runId} in ${store.location}`, { details: { runId } });
  if (run.kind === "workflow") {
    // A workflow run has no session of its own to replay: its steps' runs do, each on its own.
    throw new CharterError(
      "ARGUMENT_INVALID",
      `run ${runId} is a workflow run: replay its steps' runs (charter workflow show ${runId} lists them)`,
      { details: { runId, reason: "workflow_run" } },
    );
  }
  const contract = executionContractSchema.safeParse(run.contract);
  if (!contract.success) {
    throw new CharterError(
      "TRANSCRIPT_INVALID",
      `the stored contract of run ${runId} is not a valid contract`,
      { details: { runId } },
    );
  }
  // A replay reads the stored chain and, with --live-tools, a checkpoint's invocation: none of a forged run.
  await assertRunUntampered(store, runId);
  const entries: TranscriptEntry[] = [];
  for await (const entry of store.readEntries(runId)) entries.push(entry);
  // --live-tools: start the run's tools from the invocation its checkpoints recorded.
  let live: { tools: LiveTools; close: () => Promise<void> } | null = null;
  if (options.liveTools === true) {
    const checkpoint = await store.latestCheckpoint(runId);
    const invocation = (checkpoint?.document as { invocation?: RunInvocation } | undefined)?.invocation;
    if (invocation === undefined) {
      // Not a resume: the replay itself is fine, only `--live-tools` has nothing to start the tools from.
      throw new CharterError(
        "ARGUMENT_INVALID",
        `--live-tools: run ${runId} has no recorded invocation to start its tools from`,
        { details: { runId, argument: "live-tools", reason: "no_invocation" } },
      );
    }
    live = await createLiveToolExecutor(invocation, contract.data);
  }
  let rawPayloads: Promise<Map<string, string>> | undefined;
  try {
    return await replayRecordedRun(
      {
        header: run.header,
        contract: contract.data,
        entries,
        readRaw: async (hash) => {
          // Read once, all of them: a replay looks up every response the run recorded.
          rawPayloads ??= readRunRawPayloads(store, runId);
          const json = (await rawPayloads).get(hash);
          return json === undefined ? null : JSON.parse(json);
        },
      },
      options.live !== undefined
        ? { liveTools: options.live }
        : live === null
          ? {}
          : { liveTools: live.tools },
    );
  } finally {
    await live?.close();
  }
}

async function readRunRawPayloads(store: RunStore, runId: string): Promise<Map<string, string>> {
  const payloads = new Map<string, string>();
  for await (const page of store.readRunRawPayloads(runId)) {
    for (const payload of page) payloads.set(payload.hash, payload.json);
  }
  return payloads;
}
