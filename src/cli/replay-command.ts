import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { CharterError } from "../foundation/charter-error.js";
import type { ReplayReport } from "../runner/replay-report.js";
import type { NotReExecutedReason } from "../runner/replay-tool-calls.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodes } from "./exit-code.js";
import { openCliStore } from "./open-cli-store.js";
import { runDirectoryOfTenant } from "./run-directory-of-tenant.js";
import { sharedFlags } from "./shared-flags.js";

/** A run id: the run store first, then the runs directory. */
async function replayById(
  runId: string,
  values: { "runs-dir"?: string; store?: string; config?: string; tenant?: string; "live-tools"?: boolean },
  streams: CliStreams,
) {
  const { replayStoredRun } = await import("../runner/replay-stored-run.js");
  const { replayRunDirectory } = await import("../runner/replay-run-directory.js");
  const store = await openCliStore(values, streams);
  try {
    if ((await store.getRun(runId)) !== null)
      return await replayStoredRun(store, runId, { liveTools: values["live-tools"] === true });
  } finally {
    await store.close();
  }
  if (values["live-tools"] === true) throw liveToolsNeedTheStore(runId);
  const runsDirectory = values["runs-dir"] ?? join(homedir(), ".charter", "runs");
  return replayRunDirectory(await runDirectoryOfTenant(runsDirectory, runId, values.tenant ?? null));
}

/**
 * `--live-tools` starts the run's tools from the invocation the run store records; a run directory records none,
 * so it would replay offline while claiming live tools.
 */
function liveToolsNeedTheStore(target: string): CharterError {
  return new CharterError(
    "ARGUMENT_INVALID",
    `--live-tools replays runs from the run store only, and ${target} is not a run in it`,
    { details: { argument: "live-tools", target, reason: "not_in_store" } },
  );
}

const flags = {
  "live-tools": {
    type: "boolean",
    default: false,
    description:
      "Call the read-only and idempotent tools again and compare their answers with the record (run store runs only).",
  },
  json: { ...sharedFlags.json, description: "Print the replay report as JSON." },
  "runs-dir": sharedFlags["runs-dir"],
  store: sharedFlags.store,
  config: sharedFlags.config,
  tenant: sharedFlags.tenant,
} as const;

/** `charter replay <run-id|run-dir>`: re-runs a recorded run with no network and compares every entry. */
export const replayCommand = defineCommand({
  name: "replay",
  summary: "Re-run a recorded run offline and compare every entry",
  description:
    "Re-runs a recorded run with the model answers and tool results from its record, with no network, and reports the first entry that diverges. Exit 0 when the replay matches the record, 1 when not.",
  positionals: [{ name: "run-dir|run-id", description: "A run directory, or the id of a run." }],
  flags,
  examples: ["charter replay 01JD8X3K2M", "charter replay 01JD8X3K2M --live-tools --json"],
  run: replayRun,
});

async function replayRun(
  positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const { replayRunDirectory } = await import("../runner/replay-run-directory.js");
  const [target] = positionals;
  if (target === undefined) {
    throw new CharterError("ARGUMENT_INVALID", "charter replay needs a run directory or run id", {
      details: { argument: "run" },
    });
  }
  if (values["live-tools"] === true && existsSync(target)) throw liveToolsNeedTheStore(target);
  const report = existsSync(target)
    ? await replayRunDirectory(resolve(target))
    : await replayById(target, values, streams);
  if (values.json) streams.stdout.write(`${JSON.stringify(report)}\n`);
  else streams.stdout.write(describeReplay(report, values["live-tools"] === true));
  // A tool that answers differently live is a finding too: scripts see it in the exit code.
  return report.ok && report.toolDivergences.length === 0 ? exitCodes.success : exitCodes.sessionFailure;
}

const notReExecutedBecause: Record<NotReExecutedReason, string> = {
  denied: "denied in the record",
  not_executed: "not executed in the record",
  destructive: "destructive",
  not_idempotent: "neither read-only nor idempotent",
  source_changed: "its name leads to another tool now, or to none",
};

/** The human report: the verdict, then with live tools what ran again, what did not and why, and every divergence. */
function describeReplay(report: ReplayReport, liveTools: boolean): string {
  const lines: string[] = [];
  const divergence = report.divergence;
  if (divergence === null) {
    lines.push(
      `replayed: ${report.entries} entries, outcome ${report.outcome}, head ${report.headHash} (matches the record)`,
    );
  } else {
    lines.push(
      `DIVERGED at entry ${divergence.seq} (${divergence.step_id}): ${divergence.reason}: ${divergence.detail}`,
    );
    if (divergence.details !== undefined) {
      lines.push(
        `  request hash: recorded ${divergence.details.recordedRequestHash ?? "(none)"}, replayed ${divergence.details.replayedRequestHash}`,
      );
    }
  }
  if (liveTools) {
    lines.push(
      `live tools: ${report.reExecuted.length} call(s) executed again, ${report.notReExecuted.length} answered from the record, ${report.toolDivergences.length} diverged`,
    );
    for (const call of report.notReExecuted) {
      lines.push(
        `  not re-executed: ${call.callId} (${call.tool}, turn ${call.turn}): ${notReExecutedBecause[call.reason]}`,
      );
    }
    for (const tool of report.toolDivergences) {
      lines.push(
        `  TOOL DIVERGED: ${tool.callId} (${tool.tool}, turn ${tool.turn}): recorded ${tool.recorded.status} ${JSON.stringify(tool.recorded.preview)} [${tool.recorded.contentHash.slice(0, 12)}], live ${tool.live.status} ${JSON.stringify(tool.live.preview)} [${tool.live.contentHash.slice(0, 12)}]`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}
