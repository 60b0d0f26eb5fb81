import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { CharterError } from "../foundation/charter-error.js";
import type { ChildRunVerification } from "../workflow/verify-workflow-run.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodes } from "./exit-code.js";
import { openCliStore } from "./open-cli-store.js";
import { runDirectoryOfTenant } from "./run-directory-of-tenant.js";
import { sharedFlags } from "./shared-flags.js";

/** A run id: the run store first, then the runs directory. */
async function verifyById(
  runId: string,
  values: { "runs-dir"?: string; store?: string; config?: string; tenant?: string },
  streams: CliStreams,
) {
  const { verifyStoredRun } = await import("../store/verify-stored-run.js");
  const { verifyRunDirectory } = await import("../transcript/verify-transcript.js");
  const store = await openCliStore(values, streams);
  try {
    const run = await store.getRun(runId);
    if (run?.kind === "workflow") {
      // A workflow run: its own chain and records, then every run its steps started.
      const { verifyWorkflowRun } = await import("../workflow/verify-workflow-run.js");
      return await verifyWorkflowRun(store, runId);
    }
    if (run !== null) return await verifyStoredRun(store, runId);
  } finally {
    await store.close();
  }
  const runsDirectory = values["runs-dir"] ?? join(homedir(), ".charter", "runs");
  return verifyRunDirectory(await runDirectoryOfTenant(runsDirectory, runId, values.tenant ?? null));
}

const flags = {
  json: { ...sharedFlags.json, description: "Print the verification report as JSON." },
  "runs-dir": sharedFlags["runs-dir"],
  store: sharedFlags.store,
  config: sharedFlags.config,
  tenant: sharedFlags.tenant,
} as const;

/** `charter verify <run-dir|run-id>`: recomputes the chain and names the first bad entry. */
export const verifyCommand = defineCommand({
  name: "verify",
  summary: "Check that a run's transcript is intact",
  description:
    "Recomputes the hash chain of a run's transcript and its contract hash, and names the first entry that does not match. A run id is looked up in the run store, then in the runs directory. A workflow run is verified with every run its steps started. Exit 0 when intact, 1 when not.",
  positionals: [{ name: "run-dir|run-id", description: "A run directory, or the id of a run." }],
  flags,
  examples: ["charter verify 01JD8X3K2M", "charter verify ~/.charter/runs/01JD8X3K2M --json"],
  run: verifyRun,
});

async function verifyRun(
  positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const { verifyRunDirectory } = await import("../transcript/verify-transcript.js");
  const [target] = positionals;
  if (target === undefined) {
    throw new CharterError("ARGUMENT_INVALID", "charter verify needs a run directory or run id", {
      details: { argument: "run" },
    });
  }
  const report = existsSync(target)
    ? await verifyRunDirectory(resolve(target))
    : await verifyById(target, values, streams);
  if (values.json) streams.stdout.write(`${JSON.stringify(report)}\n`);
  else if (report.ok) {
    streams.stdout.write(`verified: ${report.entries} entries, head ${report.head_hash}\n`);
    const children: readonly ChildRunVerification[] =
      (report as { children?: readonly ChildRunVerification[] }).children ?? [];
    for (const child of children) {
      streams.stdout.write(
        `  step ${child.stepId}: run ${child.runId} verified: ${child.entries} entries, head ${child.head_hash}\n`,
      );
    }
  } else {
    const bad = report.first_bad_entry;
    streams.stdout.write(
      bad?.record !== undefined
        ? `NOT verified: ${bad.record}: ${bad.reason_code}: ${bad.detail}\n`
        : `NOT verified: entry ${bad?.seq} (${bad?.step_id}): ${bad?.reason_code}: ${bad?.detail}\n`,
    );
  }
  return report.ok ? exitCodes.success : exitCodes.sessionFailure;
}
