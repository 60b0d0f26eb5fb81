import { CharterError } from "../foundation/charter-error.js";
import type { CliStreams } from "./cli-streams.js";
import { exitCodes } from "./exit-code.js";
import { openCliStore } from "./open-cli-store.js";

/** `charter runs list` and `charter runs show <run-id>`: what the run store holds. */
export async function runsCommand(
  positionals: readonly string[],
  values: { json?: boolean; store?: string; config?: string; limit?: string },
  streams: CliStreams,
): Promise<number> {
  const [subcommand, runId] = positionals;
  const store = await openCliStore(values);
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
      const runs = await store.listRuns({ limit });
      if (values.json) streams.stdout.write(`${JSON.stringify(runs)}\n`);
      else {
        for (const run of runs) {
          streams.stdout.write(
            `${run.runId}  ${run.agentId}  ${run.status}  ${run.outcome ?? "-"}  turns ${run.totals.turns}  tokens ${run.totals.tokensIn}/${run.totals.tokensOut}  ${new Date(run.createdAt).toISOString()}\n`,
          );
        }
      }
      return exitCodes.success;
    }
    if (subcommand === "show" && runId !== undefined) {
      const run = await store.getRun(runId);
      if (run === null)
        throw new CharterError("RUN_NOT_FOUND", `no run ${runId} in ${store.location}`, {
          details: { runId },
        });
      const summary = {
        runId: run.runId,
        agentId: run.agentId,
        status: run.status,
        statusReason: run.statusReason,
        outcome: run.outcome,
        errorCode: run.errorCode,
        turns: run.totals.turns,
        toolsUsed: run.totals.toolsUsed,
        tokens: { input: run.totals.tokensIn, output: run.totals.tokensOut },
        costUsd: run.totals.costUsd,
        durationMs: run.finishedAt === null ? null : run.finishedAt - run.createdAt,
        entries: run.entryCount,
        chainHead: run.headHash,
        contractHash: run.contractHash,
        parentRunId: run.parentRunId,
        finalReport: run.finalReport,
      };
      if (values.json) streams.stdout.write(`${JSON.stringify(summary)}\n`);
      else {
        for (const [key, value] of Object.entries(summary)) {
          if (key === "finalReport") continue;
          streams.stdout.write(`${key}: ${typeof value === "object" ? JSON.stringify(value) : value}\n`);
        }
      }
      return exitCodes.success;
    }
    throw new CharterError("ARGUMENT_INVALID", "usage: charter runs list | charter runs show <run-id>", {
      details: { argument: "subcommand" },
    });
  } finally {
    await store.close();
  }
}
