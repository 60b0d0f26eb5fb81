import { readdir, stat } from "node:fs/promises";
import { extname, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { CharterError } from "../foundation/charter-error.js";
import { readFileText } from "../foundation/read-file-text.js";
import { type LoadedWorkItem, loadWorkItem, validateWorkItem } from "./load-work-item.js";

const itemExtensions = new Set([".yaml", ".yml", ".json"]);

/**
 * The work items of a plan, sorted by id: either a folder whose `.yaml`, `.yml` and `.json` files (not in
 * subfolders, not hidden: `.charter.json` is configuration) are one work item each, or one plan file (YAML or JSON)
 * with `items:`, a list of work items. WORK_PLAN_INVALID for a plan that cannot be read, holds no item, or gives
 * one id twice; WORK_ITEM_INVALID (file and field named) for an item that fails its schema.
 */
export async function loadWorkPlan(path: string): Promise<LoadedWorkItem[]> {
  const absolute = resolve(path);
  const stats = await stat(absolute).catch((error: NodeJS.ErrnoException) => {
    throw new CharterError(
      "WORK_PLAN_INVALID",
      `cannot read work plan ${absolute}: give a folder of work item files or a plan file with items:`,
      {
        details: { file: absolute, reason: error.code ?? "unreadable" },
        cause: error,
      },
    );
  });
  const items = stats.isDirectory() ? await loadFolder(absolute) : await loadPlanFile(absolute);
  if (items.length === 0) {
    throw new CharterError(
      "WORK_PLAN_INVALID",
      stats.isDirectory()
        ? `work plan folder ${absolute} holds no work item file (.yaml, .yml or .json)`
        : `work plan file ${absolute} lists no work item under items:`,
      { details: { file: absolute, reason: "empty" } },
    );
  }
  const seen = new Map<string, string>();
  for (const loaded of items) {
    const earlier = seen.get(loaded.item.id);
    if (earlier !== undefined) {
      throw new CharterError(
        "WORK_PLAN_INVALID",
        `work item id ${loaded.item.id} is given twice (${earlier} and ${loaded.path}): every item of a plan needs its own id`,
        { details: { file: loaded.path, reason: "duplicate_id", id: loaded.item.id } },
      );
    }
    seen.set(loaded.item.id, loaded.path);
  }
  return items.sort((left, right) => compareIds(left.item.id, right.item.id));
}

/** Ids in code-unit order: the same on every machine and locale (the plan's order of application). */
export function compareIds(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

async function loadFolder(folder: string): Promise<LoadedWorkItem[]> {
  const entries = await readdir(folder, { withFileTypes: true });
  const files = entries
    .filter(
      (entry) => entry.isFile() && !entry.name.startsWith(".") && itemExtensions.has(extname(entry.name)),
    )
    .map((entry) => entry.name)
    .sort(compareIds);
  const items: LoadedWorkItem[] = [];
  for (const name of files) items.push(await loadWorkItem(join(folder, name)));
  return items;
}

async function loadPlanFile(path: string): Promise<LoadedWorkItem[]> {
  const text = await readFileText(path, "WORK_PLAN_INVALID", "cannot read work plan file");
  let data: unknown;
  try {
    data = extname(path) === ".json" ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new CharterError(
      "WORK_PLAN_INVALID",
      `work plan file ${path} is not valid ${extname(path) === ".json" ? "JSON" : "YAML"}: ${String(error)}`,
      { details: { file: path, reason: "syntax" } },
    );
  }
  const keys = typeof data === "object" && data !== null && !Array.isArray(data) ? Object.keys(data) : null;
  const list = keys === null ? undefined : (data as { items?: unknown }).items;
  if (keys === null || !Array.isArray(list) || keys.some((key) => key !== "items")) {
    const extra = keys?.find((key) => key !== "items");
    throw new CharterError(
      "WORK_PLAN_INVALID",
      `work plan file ${path} must hold one key, items: a list of work items${extra === undefined ? "" : ` (unknown key "${extra}")`}. A single work item runs with 'charter work run'`,
      { details: { file: path, reason: "shape", field: extra ?? "items" } },
    );
  }
  return list.map((entry, index) => validateWorkItem(entry, path, ["items", index]));
}
