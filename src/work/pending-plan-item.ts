import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ExecutedWorkItem } from "./execute-work-item.js";
import { workRecordFolder } from "./work-lock.js";
import type { WorkRepository } from "./work-repository.js";

function pendingPath(folder: string, runId: string): string {
  return join(folder, `${runId}.json`);
}

/**
 * Keeps what an item of a plan did until its receipt takes its place in the chain (after its level, in id order),
 * in the plan's record folder beside the lock: a plan killed in between is recovered from it.
 */
export async function savePendingPlanItem(
  repository: WorkRepository,
  planId: string,
  executed: ExecutedWorkItem,
): Promise<void> {
  const folder = await workRecordFolder(repository, planId);
  await writeFile(pendingPath(folder, executed.content.run_id), `${JSON.stringify(executed)}\n`);
}

export async function readPendingPlanItem(
  repository: WorkRepository,
  planId: string,
  runId: string,
): Promise<ExecutedWorkItem | null> {
  const folder = join(repository.gitDirectory, "charter-work", planId);
  try {
    return JSON.parse(await readFile(pendingPath(folder, runId), "utf8")) as ExecutedWorkItem;
  } catch {
    return null;
  }
}
