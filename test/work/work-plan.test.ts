import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemEnvironment } from "../../src/foundation/environment.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import type { ScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import type { WorkPlanItemResult } from "../../src/work/work-plan-result.js";
import type { WorkRunResult } from "../../src/work/work-run-result.js";
import { charterBinary, cli } from "../cli/cli-harness.js";
import { git, gitRepository } from "./git-fixture.js";
import { barrier, hashOf, planSetup, receiptAt } from "./plan-harness.js";
import { call, report } from "./work-harness.js";

const servers: ScriptedOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function setup(...args: Parameters<typeof planSetup>) {
  const created = await planSetup(...args);
  servers.push(created.server);
  return created;
}

function ran(result: WorkPlanItemResult | undefined): WorkRunResult {
  if (result === undefined || result.status === "blocked")
    throw new Error(`not run: ${JSON.stringify(result)}`);
  return result;
}

function byId(results: readonly WorkPlanItemResult[]): Record<string, WorkPlanItemResult> {
  return Object.fromEntries(results.map((result) => [result.work_item_id, result]));
}

// Each item starts a run (and the replay a process or two): slower than the default timeout on a busy machine.
describe("charter work plan", { timeout: 240_000 }, () => {
  it("runs three levels; the two items of level 0 overlap (each held until the other has asked); commits in id order; receipts chained, verified and replayable", async () => {
    const root = await gitRepository({ "README.md": "readme\n" });
    // A barrier each way: a's first answer waits for b's first request and b's for a's. Run one after the other,
    // the first item would wait forever: the test passes only when both are under way at once.
    const aAsked = barrier();
    const bAsked = barrier();
    const plan = await setup({
      a: {
        answers: async (turn) => {
          if (turn === 0) {
            aAsked.open();
            await bAsked.opened;
            return call("workspace__write_file", { path: "a.txt", content: "from a\n" });
          }
          return report("Wrote a.txt");
        },
      },
      b: {
        answers: async (turn) => {
          if (turn === 0) {
            bAsked.open();
            await aAsked.opened;
            return call("workspace__write_file", { path: "b.txt", content: "from b\n" });
          }
          return report("Wrote b.txt");
        },
      },
      c: {
        item: { dependencies: ["a", "b"], test_command: "test -f a.txt && test -f b.txt" },
        answers: [
          call("workspace__write_file", { path: "c.txt", content: "a and b were there\n" }),
          report("Wrote c.txt"),
        ],
      },
      d: {
        item: { dependencies: ["c"] },
        answers: [
          call("workspace__edit_file", { path: "c.txt", old_string: "there", new_string: "there, then d" }),
          report("Edited c.txt"),
        ],
      },
    });
    const start = git(root, "rev-parse", "HEAD");
    const { exitCode, result, stderr } = await plan.run(root);
    expect(stderr).not.toContain("warning");
    expect(result?.status).toBe("success");
    expect(exitCode).toBe(0);
    expect(result?.levels).toEqual([["a", "b"], ["c"], ["d"]]);
    expect(result?.results.map((item) => [item.work_item_id, item.status])).toEqual([
      ["a", "success"],
      ["b", "success"],
      ["c", "success"],
      ["d", "success"],
    ]);
    // One commit per item on the branch, in level and id order; the working tree is at the last and clean.
    expect(git(root, "log", "--format=%s", `${start}..HEAD`).split("\n")).toEqual([
      "d: Edited c.txt",
      "c: Wrote c.txt",
      "b: Wrote b.txt",
      "a: Wrote a.txt",
    ]);
    expect(git(root, "symbolic-ref", "HEAD")).toBe("refs/heads/main");
    expect(result?.head_commit).toBe(git(root, "rev-parse", "HEAD"));
    expect(git(root, "status", "--porcelain")).toBe("");
    expect(await readFile(join(root, "c.txt"), "utf8")).toBe("a and b were there, then d\n");
    // No worktree is left.
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(1);

    // Receipts in the repository's .charter/work, chained in level and id order, each one verified.
    const items = byId(result?.results ?? []);
    const receipts = await Promise.all(
      ["a", "b", "c", "d"].map((id) => receiptAt(ran(items[id]).receipt_path)),
    );
    for (const receipt of receipts) expect(receipt.receipt_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(receipts.map((receipt) => receipt.previous_receipt_hash)).toEqual([
      null,
      receipts[0]?.receipt_hash,
      receipts[1]?.receipt_hash,
      receipts[2]?.receipt_hash,
    ]);
    expect(ran(items.a).receipt_path.startsWith(join(root, ".charter/work/"))).toBe(true);
    expect(receipts[2]?.commit).toBe(git(root, "rev-parse", "HEAD^"));
    expect(ran(items.c).created_files).toEqual([join(root, "c.txt")]);
    for (const id of ["a", "b", "c", "d"]) {
      const verified = await cli(["work", "verify", ran(items[id]).receipt_id, "--repo", root, "--json"]);
      expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, problems: [] });
    }
    // An item of level 1 replays from its own before snapshot (the base after level 0) to its receipt's hash.
    const script = ran(items.c).proof_script ?? "";
    const replayed = execFileSync("bash", [script], {
      encoding: "utf8",
      env: { ...process.env, CHARTER: `${process.execPath} ${charterBinary}` },
    });
    expect(replayed).toBe(`replay verified: ${ran(items.c).output_hash}\n`);
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(1);
  });

  it("a conflict: two items of a level edit the same line; the later id ends conflict, its dependent is blocked, only the first change is in the repository", async () => {
    const root = await gitRepository({ "shared.txt": "one\ntwo\n" });
    const plan = await setup({
      first: {
        answers: [
          call("workspace__edit_file", { path: "shared.txt", old_string: "one", new_string: "ONE (first)" }),
          report("First edit"),
        ],
      },
      second: {
        answers: [
          call("workspace__edit_file", { path: "shared.txt", old_string: "one", new_string: "ONE (second)" }),
          report("Second edit"),
        ],
      },
      third: { item: { dependencies: ["second"] }, answers: [report("never asked")] },
    });
    const start = git(root, "rev-parse", "HEAD");
    const { exitCode, result } = await plan.run(root);
    const items = byId(result?.results ?? []);
    expect(items.first?.status).toBe("success");
    expect(items.second?.status).toBe("conflict");
    expect(ran(items.second).error).toBe(
      "Conflict: shared.txt also changed by work item first, applied before it; its change was not applied",
    );
    expect(items.third).toEqual({
      status: "blocked",
      work_item_id: "third",
      blocked_by: "second",
      error: "Blocked: dependency second ended conflict",
    });
    expect(plan.requestsOf("third")).toBe(0);
    expect(result?.status).toBe("failure");
    expect(exitCode).toBe(1);
    // Only the first change: one commit, the file as the first item left it, nothing else.
    expect(git(root, "log", "--format=%s", `${start}..HEAD`)).toBe("first: First edit");
    expect(await readFile(join(root, "shared.txt"), "utf8")).toBe("ONE (first)\ntwo\n");
    expect(git(root, "status", "--porcelain")).toBe("");
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(1);
    const receipt = await receiptAt(ran(items.second).receipt_path);
    expect(receipt).toMatchObject({ status: "conflict", commit: null, output_hash: receipt.before_hash });
    expect(receipt.after_hash).not.toBe(receipt.before_hash);
    const verified = await cli(["work", "verify", receipt.receipt_id, "--repo", root, "--json"]);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true });
    // Both receipts are in the run store too (the default one, for the default tenant), as written.
    const store = await openRunStore({ environment: systemEnvironment });
    try {
      // The store lists by creation time; two receipts written in one millisecond tie, so compare by item id.
      const stored = (await store.listWorkReceipts({ repository: root })).sort((left, right) =>
        left.workItemId.localeCompare(right.workItemId),
      );
      expect(stored.map((entry) => [entry.workItemId, entry.status])).toEqual([
        ["first", "success"],
        ["second", "conflict"],
      ]);
      expect(stored[1]?.receipt).toEqual(receipt);
    } finally {
      await store.close();
    }
  });

  it("a file of yours edited while the plan runs is never overwritten: the item touching it ends conflict, your edit stays", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "b.txt": "b\n" });
    const plan = await setup({
      edits: {
        answers: async (turn) => {
          // While the agent works in its worktree, you edit the same file in your working tree.
          if (turn === 0) await writeFile(join(root, "a.txt"), "my edit\n");
          return turn === 0
            ? call("workspace__write_file", { path: "a.txt", content: "agent\n" })
            : report("Changed a");
        },
      },
      other: {
        answers: [call("workspace__write_file", { path: "b.txt", content: "other\n" }), report("Changed b")],
      },
    });
    const start = git(root, "rev-parse", "HEAD");
    const { exitCode, result } = await plan.run(root);
    const items = byId(result?.results ?? []);
    expect(items.edits?.status).toBe("conflict");
    expect(ran(items.edits).error).toMatch(
      /^Conflict: its change could not be applied to the working tree: /,
    );
    expect(items.other?.status).toBe("success");
    expect(exitCode).toBe(1);
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("my edit\n");
    expect(await readFile(join(root, "b.txt"), "utf8")).toBe("other\n");
    expect(git(root, "log", "--format=%s", `${start}..HEAD`)).toBe("other: Changed b");
    expect(git(root, "status", "--porcelain")).toBe("M a.txt");
  });

  it("a dependency cycle is refused before anything runs, naming it (exit 4)", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const plan = await setup({
      alpha: { item: { dependencies: ["gamma"] }, answers: [report("never")] },
      beta: { answers: [report("never")] },
      gamma: { item: { dependencies: ["alpha"] }, answers: [report("never")] },
    });
    const before = await hashOf(root);
    const { exitCode, stderr, result } = await plan.run(root);
    expect(exitCode).toBe(4);
    expect(result).toBeNull();
    expect(stderr).toContain("WORK_PLAN_CYCLE");
    expect(stderr).toContain("alpha -> gamma -> alpha");
    expect(plan.server.requests).toHaveLength(0);
    expect(await hashOf(root)).toBe(before);
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(1);
  });

  it("prints each item and the plan's status as text; --max-parallel must be a whole number of at least 1", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const plan = await setup({ orphan: { item: { dependencies: ["ghost"] }, answers: [report("never")] } });
    const refused = await cli(["work", "plan", plan.folder, "--repo", root, "--max-parallel", "0"]);
    expect(refused.exitCode).toBe(4);
    expect(refused.stderr).toContain("ARGUMENT_INVALID");
    const text = await cli(["work", "plan", plan.folder, "--repo", root]);
    expect(text.exitCode).toBe(1);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("blocked: work item orphan: Blocked: dependency ghost is not in the plan");
    expect(lines[1]).toMatch(
      new RegExp(`^plan plan_[0-9a-f]+: failure \\(1 blocked\\); HEAD ${git(root, "rev-parse", "HEAD")}$`),
    );
    expect(lines).toHaveLength(2);
    expect(plan.server.requests).toHaveLength(0);
  });

  it("a missing dependency blocks the item and its dependents; the rest runs (exit 1)", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const plan = await setup({
      fine: { answers: [call("workspace__write_file", { path: "fine.txt", content: "ok\n" }), report("ok")] },
      orphan: { item: { dependencies: ["ghost"] }, answers: [report("never")] },
      later: { item: { dependencies: ["orphan"] }, answers: [report("never")] },
    });
    const { exitCode, result } = await plan.run(root);
    const items = byId(result?.results ?? []);
    expect(items.fine?.status).toBe("success");
    expect(items.orphan).toEqual({
      status: "blocked",
      work_item_id: "orphan",
      blocked_by: "ghost",
      error: "Blocked: dependency ghost is not in the plan",
    });
    expect(items.later).toMatchObject({ status: "blocked", blocked_by: "orphan" });
    expect(plan.requestsOf("orphan") + plan.requestsOf("later")).toBe(0);
    expect(exitCode).toBe(1);
    // A blocked item never ran: no receipt for it.
    const folders = execFileSync("ls", [join(root, ".charter/work")], { encoding: "utf8" })
      .trim()
      .split("\n");
    expect(folders).toHaveLength(1);
  });

  it("a failed dependency blocks its dependents; a denied one too, and a plan that only had denials exits 6", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "b.txt": "b\n" });
    const failing = await setup({
      broken: {
        item: { test_command: "exit 1" },
        answers: [call("workspace__write_file", { path: "a.txt", content: "broken\n" }), report("done")],
      },
      dependent: { item: { dependencies: ["broken"] }, answers: [report("never")] },
      independent: {
        answers: [call("workspace__write_file", { path: "c.txt", content: "c\n" }), report("Wrote c")],
      },
    });
    const start = git(root, "rev-parse", "HEAD");
    const failed = await failing.run(root);
    const items = byId(failed.result?.results ?? []);
    expect(ran(items.broken)).toMatchObject({ status: "failure", error: "Tests failed" });
    expect(items.dependent).toMatchObject({
      status: "blocked",
      error: "Blocked: dependency broken ended failure",
    });
    expect(items.independent?.status).toBe("success");
    expect(failed.exitCode).toBe(1);
    expect(git(root, "log", "--format=%s", `${start}..HEAD`)).toBe("independent: Wrote c");
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("a\n");

    const denying = await setup({
      wide: {
        item: { constraints: { max_files: 1 } },
        answers: [
          call("workspace__write_file", { path: "a.txt", content: "A\n" }),
          call("workspace__write_file", { path: "b.txt", content: "B\n" }),
          report("done"),
        ],
      },
      after: { item: { dependencies: ["wide"] }, answers: [report("never")] },
    });
    const denied = await denying.run(root);
    const deniedItems = byId(denied.result?.results ?? []);
    expect(ran(deniedItems.wide).denial_reason).toBe("Exceeded max files: 2 > 1");
    expect(deniedItems.after).toMatchObject({
      status: "blocked",
      error: "Blocked: dependency wide ended denied",
    });
    expect(denied.exitCode).toBe(6);
    expect(git(root, "status", "--porcelain")).toBe("");
  });

  it("refuses a working tree with uncommitted changes, and an invalid item naming its file and field (exit 4)", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const plan = await setup({ one: { answers: [report("never")] } });
    await import("node:fs/promises").then((fs) => fs.writeFile(join(root, "a.txt"), "mine\n"));
    const dirty = await plan.run(root);
    expect(dirty.exitCode).toBe(4);
    expect(dirty.stderr).toContain("WORK_TREE_NOT_CLEAN");
    expect(dirty.stderr).toContain("a.txt");
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("mine\n");
    git(root, "checkout", "--", "a.txt");
    await import("node:fs/promises").then((fs) =>
      fs.writeFile(join(plan.folder, "two.json"), JSON.stringify({ id: "two", agent_id: "agent.md" })),
    );
    const invalid = await plan.run(root);
    expect(invalid.exitCode).toBe(4);
    expect(invalid.stderr).toContain("WORK_ITEM_INVALID");
    expect(invalid.stderr).toContain("two.json: description");
    expect(plan.server.requests).toHaveLength(0);
  });
});
