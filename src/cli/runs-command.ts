import { CharterError } from "../foundation/charter-error.js";
import type { TranscriptEntry } from "../transcript/transcript-entry.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodes } from "./exit-code.js";
import { openCliStore } from "./open-cli-store.js";
import { pendingApprovalText } from "./pending-approval-text.js";
import { sharedFlags } from "./shared-flags.js";
import { type StoredRunSummary, storedRunSummary } from "./stored-run-summary.js";

const flags = {
  limit: {
    type: "string",
    valueName: "N",
    default: "50",
    description: "runs list: at most this many runs, newest first.",
  },
  tenant: {
    ...sharedFlags.tenant,
    description: "The tenant whose runs to list or show: another tenant's runs are not found.",
  },
  json: sharedFlags.json,
  store: sharedFlags.store,
  config: sharedFlags.config,
  conversation: {
    type: "boolean",
    default: false,
    description:
      "runs show: the run's conversation turn by turn (messages, reasoning, tool calls and results, tokens, latency and cost per turn).",
  },
} as const;

/** `charter runs list` and `charter runs show <run-id>`: what the run store holds. */
export const runsCommand = defineCommand({
  name: "runs",
  summary: "List the runs in the run store, or show one",
  description:
    "runs list prints one line per run (id, agent, status, outcome, turns, tools, tokens, cost, duration, chain head), newest first; runs show prints one run's summary, its final report and its pending approvals, or with --conversation the run as a person reads it.",
  positionals: [
    { name: "list|show", description: "list: the runs; show: one run." },
    { name: "run-id", optional: true, description: "runs show: the run to show." },
  ],
  flags,
  examples: [
    "charter runs list --limit 10",
    "charter runs list --tenant acme",
    "charter runs show 01JD8X3K2M --json",
    "charter runs show 01JD8X3K2M --tenant acme",
    "charter runs show 01JD8X3K2M --conversation",
  ],
  run: listOrShowRuns,
});

async function listOrShowRuns(
  positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const { readPendingApprovals } = await import("../runner/read-pending-approvals.js");
  const [subcommand, runId] = positionals;
  const store = await openCliStore(values, streams);
  try {
    if (subcommand === "list") {
      const limit = values.limit === undefined ? 50 : Number(values.limit);
      if (!Number.isInteger(limit) || limit <= 0) {
        throw new CharterError(
          "ARGUMENT_INVALID",
          `--limit must be a positive integer, not '${values.limit}'`,
          { details: { argument: "limit" } },
        );
      }
      const runs = (await store.listRuns({ limit })).map((run) => storedRunSummary(run));
      if (values.json) streams.stdout.write(`${JSON.stringify(runs)}\n`);
      else for (const run of runs) streams.stdout.write(`${listLine(run)}\n`);
      return exitCodes.success;
    }
    if (subcommand === "show" && runId !== undefined) {
      const run = await store.getRun(runId);
      if (run === null)
        throw new CharterError("RUN_NOT_FOUND", `no run ${runId} in ${store.location}`, {
          details: { runId },
        });
      if (values.conversation && run.kind === "workflow") {
        // A workflow run has no conversation of its own: its steps' runs each have theirs.
        throw new CharterError(
          "ARGUMENT_INVALID",
          `run ${runId} is a workflow run: charter workflow show ${runId} shows its steps, and charter runs show <step-run-id> --conversation each step's conversation`,
          { details: { runId, reason: "workflow_run" } },
        );
      }
      if (values.conversation) {
        const { conversationView } = await import("./conversation-view.js");
        const { conversationText } = await import("./conversation-text.js");
        const entries: TranscriptEntry[] = [];
        for await (const entry of store.readEntries(runId)) entries.push(entry);
        const view = conversationView(runId, entries, await store.readAccounting(runId));
        streams.stdout.write(values.json ? `${JSON.stringify(view)}\n` : conversationText(view));
        return exitCodes.success;
      }
      const summary = {
        ...storedRunSummary(run),
        finalReport: run.finalReport,
        pendingApprovals: run.status === "awaiting_approval" ? await readPendingApprovals(store, runId) : [],
      };
      if (values.json) streams.stdout.write(`${JSON.stringify(summary)}\n`);
      else {
        for (const [key, value] of Object.entries(summary)) {
          if (key === "finalReport" || key === "pendingApprovals") continue;
          streams.stdout.write(`${key}: ${typeof value === "object" ? JSON.stringify(value) : value}\n`);
        }
        for (const approval of summary.pendingApprovals)
          streams.stdout.write(`pending: ${pendingApprovalText(approval)}\n`);
      }
      return exitCodes.success;
    }
    throw new CharterError(
      "ARGUMENT_INVALID",
      "usage: charter runs list | charter runs show <run-id> [--conversation]",
      {
        details: { argument: "subcommand" },
      },
    );
  } finally {
    await store.close();
  }
}

/** One run on one line: every field `runs show` prints but the ids of its contract, parent and tenant. */
function listLine(run: StoredRunSummary): string {
  const tools = run.toolsUsed.length > 0 ? run.toolsUsed.join(",") : "-";
  const duration = run.durationMs === null ? "-" : `${run.durationMs}ms`;
  return [
    run.runId,
    // A workflow run says so; an agent run's line is as it always was.
    ...(run.kind === "workflow" ? ["workflow"] : []),
    run.agentId,
    run.status,
    run.outcome ?? "-",
    `turns ${run.turns}`,
    `tools ${tools}`,
    `tokens ${run.tokens.input}/${run.tokens.output}`,
    `cost $${run.costUsd}`,
    `duration ${duration}`,
    `head ${run.chainHead}`,
    run.createdAt,
    // A run whose process is gone: how to continue it.
    ...(run.resumeCommand !== null ? [`continue with: ${run.resumeCommand}`] : []),
  ].join("  ");
}
