import { CharterError } from "../foundation/charter-error.js";
import { findDependencyCycle } from "../foundation/find-dependency-cycle.js";
import { compareIds } from "./load-work-plan.js";

/**
 * The plan's levels: an item's level is 0 without dependencies, else one more than its deepest dependency's, so
 * everything an item depends on has run (and been applied) before its level starts. Each level is sorted by id.
 * A dependency on an id the plan does not have is ignored here (that item is blocked when its level comes). A
 * cycle is WORK_PLAN_CYCLE naming it, before anything runs.
 */
export function workPlanLevels(
  items: readonly { readonly id: string; readonly dependencies: readonly string[] }[],
): string[][] {
  const sorted = [...items].sort((left, right) => compareIds(left.id, right.id));
  const cycle = findDependencyCycle(sorted.map((item) => ({ id: item.id, dependsOn: item.dependencies })));
  if (cycle !== null) {
    throw new CharterError(
      "WORK_PLAN_CYCLE",
      `the work items' dependencies form a cycle: ${cycle.join(" -> ")} (each depends on the next); remove one of these dependencies`,
      { details: { cycle } },
    );
  }
  const byId = new Map(sorted.map((item) => [item.id, item]));
  const levelOf = new Map<string, number>();
  const level = (id: string): number => {
    const known = levelOf.get(id);
    if (known !== undefined) return known;
    const dependencies = (byId.get(id)?.dependencies ?? []).filter((dependency) => byId.has(dependency));
    const value = dependencies.length === 0 ? 0 : 1 + Math.max(...dependencies.map(level));
    levelOf.set(id, value);
    return value;
  };
  const levels: string[][] = [];
  for (const item of sorted) {
    const index = level(item.id);
    while (levels.length <= index) levels.push([]);
    levels[index]?.push(item.id);
  }
  return levels;
}
