/**
 * The first dependency cycle among the steps (or work items), as the ids along it with the first repeated at the end
 * (`[a, b, a]`: a depends on b, which depends on a), or null when there is none. Depth-first in array order, so
 * the same file always names the same cycle. Unknown dependencies are ignored (reported elsewhere).
 */
export function findDependencyCycle(
  steps: readonly { readonly id: string; readonly dependsOn: readonly string[] }[],
): string[] | null {
  const dependencies = new Map(steps.map((step) => [step.id, step.dependsOn]));
  const state = new Map<string, "visiting" | "done">();
  const path: string[] = [];

  function visit(id: string): string[] | null {
    const seen = state.get(id);
    if (seen === "done") return null;
    if (seen === "visiting") return [...path.slice(path.indexOf(id)), id];
    state.set(id, "visiting");
    path.push(id);
    for (const dependency of dependencies.get(id) ?? []) {
      if (!dependencies.has(dependency)) continue;
      const cycle = visit(dependency);
      if (cycle !== null) return cycle;
    }
    path.pop();
    state.set(id, "done");
    return null;
  }

  for (const step of steps) {
    const cycle = visit(step.id);
    if (cycle !== null) return cycle;
  }
  return null;
}
