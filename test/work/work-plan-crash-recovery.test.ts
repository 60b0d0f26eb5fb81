import { spawn } from "node:child_process";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import { delayStep } from "../../src/testing/scripted-openai-step.js";
import type { WorkPlanLockRecord } from "../../src/work/work-lock.js";
import type { WorkReceipt } from "../../src/work/work-receipt.js";
import { charterBinary, cli } from "../cli/cli-harness.js";
import { nodeProcess } from "../node-process.js";
import { git, gitRepository } from "./git-fixture.js";
import { barrier, hashOf, planSetup, receiptAt } from "./plan-harness.js";
import { call, calls, report } from "./work-harness.js";

const servers: ScriptedOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

interface PlanRecovery {
  kind: string;
  planId: string;
  commit: string;
  receipts: { receipt: WorkReceipt; path: string }[];
  worktreesRemoved: string[];
}

describe("a plan killed mid-level", { timeout: 240_000 }, () => {
  it("kill -9 while a level's items work in their worktrees, then work recover: HEAD at the last applied item, worktrees removed, interrupted receipts in id order", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const bChanged = barrier();
    const cChanged = barrier();
    // Both items of level 1 change their worktree, then wait for an answer that never comes.
    const midway = (changed: ReturnType<typeof barrier>, file: string) => (turn: number) => {
      if (turn === 0) return calls(["workspace__write_file", { path: file, content: "half-done\n" }]);
      changed.open();
      return delayStep(3_600_000, { kind: "text", text: "too late" });
    };
    const plan = await planSetup({
      a: {
        answers: [call("workspace__write_file", { path: "a.txt", content: "from a\n" }), report("Changed a")],
      },
      b: { item: { dependencies: ["a"] }, answers: midway(bChanged, "b.txt") },
      c: { item: { dependencies: ["a"] }, answers: midway(cChanged, "c.txt") },
    });
    servers.push(plan.server);
    const start = git(root, "rev-parse", "HEAD");
    const child = spawn(
      process.execPath,
      [charterBinary, "work", "plan", plan.folder, "--repo", root, "--runs-dir", plan.runsDirectory],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const exited = new Promise<string | null>((resolveExit) =>
      child.on("exit", (_code, signal) => resolveExit(signal)),
    );
    await bChanged.opened;
    await cChanged.opened;
    // Level 0 is applied; level 1's items are working in their own worktrees, the user's tree untouched.
    const afterA = git(root, "rev-parse", "HEAD");
    expect(git(root, "log", "--format=%s", `${start}..HEAD`)).toBe("a: Changed a");
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(3);
    expect(git(root, "status", "--porcelain")).toBe("");
    const worktrees = git(root, "worktree", "list", "--porcelain")
      .split("\n")
      .filter((line) => line.startsWith("worktree "))
      .map((line) => line.slice("worktree ".length))
      .slice(1);
    expect(await readFile(join(worktrees[0] ?? "", "b.txt"), "utf8")).toBe("half-done\n");

    // While the plan lives, a work item in the repository is refused.
    const locked = await cli(["work", "recover", "--repo", root, "--json"]);
    expect(JSON.parse(locked.stdout)).toMatchObject({ kind: "running" });

    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");

    const recovered = await nodeProcess([charterBinary, "work", "recover", "--repo", root, "--json"]);
    expect(recovered.stderr).toBe("");
    expect(recovered.exitCode).toBe(0);
    const recovery = JSON.parse(recovered.stdout) as PlanRecovery;
    expect(recovery.kind).toBe("recovered_plan");
    expect(recovery.commit).toBe(afterA);
    expect(git(root, "rev-parse", "HEAD")).toBe(afterA);
    expect(git(root, "symbolic-ref", "HEAD")).toBe("refs/heads/main");
    expect(git(root, "status", "--porcelain")).toBe("");
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("from a\n");
    // The worktrees are gone, from git and from disk.
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(1);
    for (const worktree of worktrees) await expect(stat(worktree)).rejects.toThrow();
    expect([...recovery.worktreesRemoved].sort()).toEqual([...worktrees].sort());
    // b and c get failure receipts (interrupted), in id order, after a's in the chain; every receipt verifies.
    expect(
      recovery.receipts.map(({ receipt }) => [receipt.work_item_id, receipt.status, receipt.error]),
    ).toEqual([
      ["b", "failure", "interrupted"],
      ["c", "failure", "interrupted"],
    ]);
    const [bReceipt, cReceipt] = recovery.receipts.map(({ receipt }) => receipt);
    expect(cReceipt?.previous_receipt_hash).toBe(bReceipt?.receipt_hash);
    const folders = await readdir(join(root, ".charter/work"));
    const all = await Promise.all(
      folders.map((folder) => receiptAt(join(root, ".charter/work", folder, "RECEIPT.json"))),
    );
    const aReceipt = all.find((receipt) => receipt.work_item_id === "a");
    expect(bReceipt?.previous_receipt_hash).toBe(aReceipt?.receipt_hash);
    expect(aReceipt).toMatchObject({ work_item_id: "a", status: "success", commit: afterA });
    for (const { path } of recovery.receipts) {
      expect((await cli(["work", "verify", path, "--json"])).exitCode).toBe(0);
    }
    expect((await cli(["work", "verify", aReceipt?.receipt_id ?? "", "--repo", root])).exitCode).toBe(0);
    // Nothing left to recover, and the repository takes a new plan.
    expect(JSON.parse((await cli(["work", "recover", "--repo", root, "--json"])).stdout)).toEqual({
      kind: "none",
    });
  });

  it("SIGINT mid-level: the level's items end interrupted and rolled back, nothing of the level is applied, later levels blocked, worktrees and lock gone (exit 1)", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const slowChanged = barrier();
    const plan = await planSetup({
      slow: {
        answers: (turn) => {
          if (turn === 0) return call("workspace__write_file", { path: "a.txt", content: "slow\n" });
          slowChanged.open();
          return delayStep(3_600_000, { kind: "text", text: "too late" });
        },
      },
      quick: {
        answers: [call("workspace__write_file", { path: "q.txt", content: "q\n" }), report("Wrote q")],
      },
      later: { item: { dependencies: ["quick"] }, answers: [report("never")] },
    });
    servers.push(plan.server);
    const start = git(root, "rev-parse", "HEAD");
    const child = spawn(
      process.execPath,
      [
        charterBinary,
        "work",
        "plan",
        plan.folder,
        "--repo",
        root,
        "--runs-dir",
        plan.runsDirectory,
        "--json",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    const exited = new Promise<number | null>((resolveExit) => child.on("exit", (code) => resolveExit(code)));
    await slowChanged.opened;
    child.kill("SIGINT");
    expect(await exited).toBe(1);
    const result = JSON.parse(stdout) as { status: string; results: Record<string, unknown>[] };
    expect(result.status).toBe("failure");
    // Whether quick had ended or not when the interrupt came, its change was not applied: interrupted.
    expect(result.results.map((item) => [item.work_item_id, item.status, item.error])).toEqual([
      ["quick", "failure", "interrupted"],
      ["slow", "failure", "interrupted"],
      ["later", "blocked", "Blocked: the plan was interrupted"],
    ]);
    expect(git(root, "rev-parse", "HEAD")).toBe(start);
    expect(git(root, "status", "--porcelain")).toBe("");
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(1);
    await expect(stat(join(root, ".git", "charter-work.lock"))).rejects.toThrow();
    for (const item of result.results.slice(0, 2)) {
      expect((await cli(["work", "verify", String(item.receipt_path), "--json"])).exitCode).toBe(0);
    }
  });

  it("recovery puts HEAD, the index and the working tree back at the record's restore point (a plan that died while applying)", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const restorePoint = git(root, "rev-parse", "HEAD");
    const restoredHash = await hashOf(root);
    // As if the plan had moved the branch and the files for an item, then died before recording it.
    await writeFile(join(root, "a.txt"), "applied\n");
    await writeFile(join(root, "new.txt"), "new\n");
    git(root, "add", "-A");
    git(root, "commit", "-q", "-m", "half-applied item");
    await writeFile(join(root, "a.txt"), "being written\n");
    const dead = await nodeProcess(["-e", "process.stdout.write(String(process.pid))"]);
    const record: WorkPlanLockRecord = {
      format: "charter-work-plan-lock/1",
      run_id: "plan_dead",
      pid: Number(dead.stdout),
      host: hostname(),
      started_at: new Date(0).toISOString(),
      restore: { branch: "refs/heads/main", commit: restorePoint },
      worktrees_folder: join(root, "..", "charter-plan-gone"),
      pending: [],
    };
    await writeFile(join(root, ".git", "charter-work.lock"), `${JSON.stringify(record)}\n`);
    const recovered = await cli(["work", "recover", "--repo", root, "--json"]);
    expect(JSON.parse(recovered.stdout)).toMatchObject({ kind: "recovered_plan", commit: restorePoint });
    expect(git(root, "rev-parse", "HEAD")).toBe(restorePoint);
    expect(git(root, "status", "--porcelain")).toBe("");
    expect(await hashOf(root)).toBe(restoredHash);
    await expect(stat(join(root, ".git", "charter-work.lock"))).rejects.toThrow();
  });
});
