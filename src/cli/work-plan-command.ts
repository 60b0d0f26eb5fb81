import { CharterError } from "../foundation/charter-error.js";
import type { WorkPlanItemResult, WorkPlanResult } from "../work/work-plan-result.js";
import type { CliStreams } from "./cli-streams.js";
import type { FlagValues } from "./command-declaration.js";
import { exitCodes } from "./exit-code.js";
import type { workFlags } from "./work-flags.js";
import { workRunOptions } from "./work-run-options.js";

function parseMaxParallel(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(value) || value < 1) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `--max-parallel takes a whole number of at least 1, not '${text}'`,
      {
        details: { argument: "max-parallel", value: text },
      },
    );
  }
  return value;
}

/** `charter work plan <folder|plan-file>`: the items as a DAG; each item's result, then the plan's status. */
export async function workPlan(
  target: string,
  values: FlagValues<typeof workFlags>,
  streams: CliStreams,
): Promise<number> {
  const maxParallel = parseMaxParallel(values["max-parallel"]);
  const { runWorkPlan } = await import("../work/run-work-plan.js");
  const result = await runWorkPlan({
    planPath: target,
    ...workRunOptions(values, streams),
    ...(maxParallel !== undefined ? { maxParallel } : {}),
    onLevelStarted: (level, ids, base) =>
      streams.stderr.write(`charter: work plan: level ${level}: ${ids.join(", ")} (from ${base})\n`),
    onItemEnded: (item) => streams.stderr.write(`charter: work plan: ${item.work_item_id}: ${item.status}\n`),
  });
  if (values.json) streams.stdout.write(`${JSON.stringify(result)}\n`);
  else streams.stdout.write(planText(result));
  return workPlanExitCode(result);
}

/**
 * 0 when every item succeeded; 6 (as `work run` for a denial) when every item that did not succeed was denied or
 * blocked by a denied item; otherwise 1 (an item failed, timed out, conflicted, or a dependency is missing).
 */
export function workPlanExitCode(plan: WorkPlanResult): number {
  if (plan.status === "success") return exitCodes.success;
  const byId = new Map(plan.results.map((result) => [result.work_item_id, result]));
  const cause = (result: WorkPlanItemResult, seen: Set<string>): string => {
    if (result.status !== "blocked") return result.status;
    const dependency = result.blocked_by === null ? undefined : byId.get(result.blocked_by);
    if (dependency === undefined || seen.has(dependency.work_item_id)) return "blocked";
    seen.add(dependency.work_item_id);
    return cause(dependency, seen);
  };
  const causes = plan.results.map((result) => cause(result, new Set([result.work_item_id])));
  return causes.every((status) => status === "success" || status === "denied")
    ? exitCodes.denied
    : exitCodes.sessionFailure;
}

function planText(plan: WorkPlanResult): string {
  const lines: string[] = [];
  for (const result of plan.results) {
    if (result.status === "blocked") {
      lines.push(`blocked: work item ${result.work_item_id}: ${result.error}`);
      continue;
    }
    const reason = result.denial_reason ?? result.error;
    lines.push(
      `${result.status}: work item ${result.work_item_id} (run ${result.run_id})${reason === undefined ? "" : `: ${reason}`}`,
      `  files: ${result.metrics.files_touched} touched (${result.created_files.length} created, ${result.modified_files.length} modified, ${result.deleted_files.length} deleted); tool calls ${result.metrics.tool_ops_count}; delta ${result.metrics.delta_size}`,
      `  output hash: ${result.output_hash}`,
      `  receipt: ${result.receipt_path}`,
    );
  }
  const counts = new Map<string, number>();
  for (const result of plan.results) counts.set(result.status, (counts.get(result.status) ?? 0) + 1);
  const summary = [...counts.entries()].map(([status, count]) => `${count} ${status}`).join(", ");
  lines.push(`plan ${plan.plan_id}: ${plan.status} (${summary}); HEAD ${plan.head_commit}`);
  return `${lines.join("\n")}\n`;
}
