import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { loadWorkPlan } from "../../src/work/load-work-plan.js";
import { workPlanLevels } from "../../src/work/work-plan-levels.js";

async function thrown(promise: Promise<unknown> | (() => unknown)): Promise<CharterError> {
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (error) {
    if (error instanceof CharterError) return error;
    throw error;
  }
  throw new Error("nothing was thrown");
}

function items(spec: Record<string, string[]>) {
  return Object.entries(spec).map(([id, dependencies]) => ({ id, dependencies }));
}

describe("the levels of a plan", () => {
  it("puts independent items in level 0 and each item one level after its deepest dependency, ids sorted", () => {
    // The example of the specification: three independent items, two that depend on them, a reconciler.
    expect(
      workPlanLevels(
        items({
          "agent-3": [],
          "agent-1": [],
          "agent-2": [],
          "agent-5": ["agent-2", "agent-3"],
          "agent-4": ["agent-1"],
          "agent-0": ["agent-1", "agent-2", "agent-3", "agent-4", "agent-5"],
        }),
      ),
    ).toEqual([["agent-1", "agent-2", "agent-3"], ["agent-4", "agent-5"], ["agent-0"]]);
  });

  it("places an item whose dependency is unknown as if it had no such dependency (it is blocked when run)", () => {
    expect(workPlanLevels(items({ a: [], b: ["ghost"], c: ["a", "ghost"] }))).toEqual([["a", "b"], ["c"]]);
  });

  it("refuses a cycle with WORK_PLAN_CYCLE naming it, the same cycle whatever the order given", async () => {
    for (const order of [
      items({ x: [], b: ["c"], c: ["d"], d: ["b"] }),
      items({ d: ["b"], c: ["d"], x: [], b: ["c"] }),
    ]) {
      const error = await thrown(() => workPlanLevels(order));
      expect(error.code).toBe("WORK_PLAN_CYCLE");
      expect(error.details).toEqual({ cycle: ["b", "c", "d", "b"] });
      expect(error.message).toContain("b -> c -> d -> b");
    }
    expect((await thrown(() => workPlanLevels(items({ self: ["self"] })))).details).toEqual({
      cycle: ["self", "self"],
    });
  });
});

describe("a plan's files", () => {
  it("reads a plan file with items: (agent paths relative to it), sorted by id", async () => {
    const folder = await mkdtemp(join(tmpdir(), "charter-plan-file-"));
    const path = join(folder, "plan.yaml");
    await writeFile(
      path,
      "items:\n  - id: second\n    agent_id: agent.md\n    description: Two\n    dependencies: [first]\n  - id: first\n    agent_id: agent.md\n    description: One\n",
    );
    const loaded = await loadWorkPlan(path);
    expect(loaded.map((item) => [item.item.id, item.item.dependencies, item.directory])).toEqual([
      ["first", [], folder],
      ["second", ["first"], folder],
    ]);
    expect(loaded[0]?.item.constraints.max_files).toBe(10);
  });

  it("names the item and field of a plan file that fails its schema, an id given twice, and a file with no items:", async () => {
    const folder = await mkdtemp(join(tmpdir(), "charter-plan-file-"));
    const path = join(folder, "plan.json");
    await writeFile(
      path,
      JSON.stringify({
        items: [
          { id: "a", agent_id: "x.md", description: "A" },
          { id: "b", agent_id: "x.md", description: "B", constraints: { max_files: 0 } },
        ],
      }),
    );
    const invalid = await thrown(loadWorkPlan(path));
    expect(invalid.code).toBe("WORK_ITEM_INVALID");
    expect(invalid.details).toMatchObject({ file: path, field: "items[1].constraints.max_files" });

    await writeFile(
      path,
      JSON.stringify({
        items: [
          { id: "a", agent_id: "x.md", description: "A" },
          { id: "a", agent_id: "x.md", description: "again" },
        ],
      }),
    );
    const duplicate = await thrown(loadWorkPlan(path));
    expect(duplicate.code).toBe("WORK_PLAN_INVALID");
    expect(duplicate.details).toMatchObject({ reason: "duplicate_id", id: "a" });

    await writeFile(path, JSON.stringify({ id: "a", agent_id: "x.md", description: "A" }));
    const single = await thrown(loadWorkPlan(path));
    expect(single.code).toBe("WORK_PLAN_INVALID");
    expect(single.message).toContain("charter work run");

    const empty = await mkdtemp(join(tmpdir(), "charter-plan-empty-"));
    await writeFile(join(empty, ".charter.json"), "{}");
    expect((await thrown(loadWorkPlan(empty))).details).toMatchObject({ reason: "empty" });
    expect((await thrown(loadWorkPlan(join(empty, "missing")))).code).toBe("WORK_PLAN_INVALID");
  });
});
