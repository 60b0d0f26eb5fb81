import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import { delayStep } from "../../src/testing/scripted-openai-step.js";
import { stateHash, workingTreeListing } from "../../src/work/state-listing.js";
import type { WorkReceipt } from "../../src/work/work-receipt.js";
import { openWorkRepository } from "../../src/work/work-repository.js";
import { cli } from "../cli/cli-harness.js";
import { git, gitRepository } from "./git-fixture.js";
import { call, calls, report, workSetup } from "./work-harness.js";

const servers: ScriptedOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function setup(...args: Parameters<typeof workSetup>) {
  const created = await workSetup(...args);
  servers.push(created.server);
  return created;
}

async function hashOf(root: string): Promise<string> {
  return stateHash(await workingTreeListing(await openWorkRepository(root)));
}

async function receiptOf(path: string): Promise<WorkReceipt> {
  return JSON.parse(await readFile(path, "utf8")) as WorkReceipt;
}

describe("charter work run", () => {
  it("success: the change stays, the receipt records it and verifies, exit 0", async () => {
    const root = await gitRepository({ "src/a.txt": "one\ntwo\n" });
    const work = await setup(
      [
        call("workspace__edit_file", { path: "src/a.txt", old_string: "two", new_string: "TWO" }),
        call("workspace__write_file", { path: "src/b.txt", content: "new\n" }),
        report("Edited a and created b\nmore detail"),
      ],
      { id: "item-1", test_command: "grep -q TWO src/a.txt && echo '2 passed, 0 failed'" },
    );
    const before = await hashOf(root);
    const { exitCode, result } = await work.run(root);
    expect(exitCode).toBe(0);
    expect(result).toMatchObject({
      status: "success",
      work_item_id: "item-1",
      modified_files: [join(root, "src/a.txt")],
      created_files: [join(root, "src/b.txt")],
      deleted_files: [],
      metrics: { tool_ops_count: 2, files_touched: 2, delta_size: 3, tests_passed: 2, tests_failed: 0 },
    });
    expect(result?.output_hash).toBe(await hashOf(root));
    expect(result?.output_hash).not.toBe(before);
    expect(Object.keys(result?.artifact_hashes ?? {})).toEqual([
      join(root, "src/a.txt"),
      join(root, "src/b.txt"),
    ]);
    const receipt = await receiptOf(result?.receipt_path ?? "");
    expect(receipt).toMatchObject({
      status: "success",
      run_id: result?.run_id,
      before_hash: before,
      after_hash: result?.output_hash,
      previous_receipt_hash: null,
      modified_files: ["src/a.txt"],
    });
    expect(receipt.contract_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(receipt.transcript_head).toMatch(/^[0-9a-f]{64}$/);
    expect(git(root, "rev-parse", `refs/charter/snapshots/${result?.run_id}/before`)).toBe(
      receipt.before_commit,
    );
    // The receipts folder ignores itself: the user's status shows only the change.
    // (git() trims the first line's leading space)
    expect(git(root, "status", "--porcelain")).toBe("M src/a.txt\n?? src/b.txt");
    const verified = await cli(["work", "verify", receipt.receipt_id, "--repo", root, "--json"]);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, problems: [] });
    expect(verified.exitCode).toBe(0);
  });

  it("atomicity on failure: a failing test command rolls everything back, status failure, exit 1", async () => {
    const root = await gitRepository({ "src/a.txt": "one\n", "gone.txt": "gone\n" });
    const work = await setup(
      [
        calls(
          ["workspace__write_file", { path: "src/a.txt", content: "broken\n" }],
          ["workspace__write_file", { path: "new/c.txt", content: "c\n" }],
          ["workspace__delete_file", { path: "gone.txt" }],
        ),
        report("done"),
      ],
      { id: "failing", test_command: "echo 'Tests  1 failed | 3 passed (4)'; exit 1" },
    );
    const beforeHash = await hashOf(root);
    const { exitCode, result } = await work.run(root);
    expect(result?.status).toBe("failure");
    expect(result?.error).toBe("Tests failed");
    expect(result?.metrics).toMatchObject({ tests_passed: 3, tests_failed: 1 });
    expect(await hashOf(root)).toBe(beforeHash);
    expect(result?.output_hash).toBe(beforeHash);
    expect(exitCode).toBe(1);
    expect(git(root, "status", "--porcelain")).toBe("");
    await expect(stat(join(root, "new"))).rejects.toThrow();
    const receipt = await receiptOf(result?.receipt_path ?? "");
    expect(receipt.test_output_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(receipt.created_files).toEqual(["new/c.txt"]);
  });

  it("admission enforcement: touching 2 files with max_files 1 is denied and rolled back, exit 6", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "b.txt": "b\n" });
    const work = await setup(
      [
        call("workspace__write_file", { path: "a.txt", content: "A\n" }),
        call("workspace__write_file", { path: "b.txt", content: "B\n" }),
        report("done"),
      ],
      { id: "too-wide", constraints: { max_files: 1 } },
    );
    const beforeHash = await hashOf(root);
    const { exitCode, result } = await work.run(root);
    expect(result?.status).toBe("denied");
    expect(result?.denial_reason).toContain("Exceeded max files");
    expect(result?.denial_reason).toBe("Exceeded max files: 2 > 1");
    expect(exitCode).toBe(6);
    expect(await hashOf(root)).toBe(beforeHash);
  });

  it("denies a delta over max_delta_size (lines added plus lines removed)", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const work = await setup(
      [call("workspace__write_file", { path: "a.txt", content: "1\n2\n3\n4\n" }), report("done")],
      { id: "too-big", constraints: { max_delta_size: 3 } },
    );
    const { result } = await work.run(root);
    // 4 lines added, 1 removed.
    expect(result?.denial_reason).toBe("Exceeded max delta size: 5 > 3");
  });

  it("stops the run at max_tool_ops: the call past the budget never executes; denied", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const work = await setup(
      [
        call("workspace__write_file", { path: "one.txt", content: "1\n" }),
        call("workspace__write_file", { path: "two.txt", content: "2\n" }),
        call("workspace__write_file", { path: "three.txt", content: "3\n" }),
        report("done"),
      ],
      { id: "busy", constraints: { max_tool_ops: 2 } },
    );
    const beforeHash = await hashOf(root);
    const { exitCode, result } = await work.run(root);
    expect(result?.status).toBe("denied");
    expect(result?.denial_reason).toBe("Exceeded max tool ops: 3 > 2");
    expect(result?.metrics.tool_ops_count).toBe(2);
    expect(result?.created_files).toEqual([join(root, "one.txt"), join(root, "two.txt")]);
    expect(exitCode).toBe(6);
    expect(await hashOf(root)).toBe(beforeHash);
    // The model was never asked again after the refused batch.
    expect(work.server.requests.length).toBe(3);
  });

  it("timeout: a test command that outlives timeout_ms ends as timeout and rolls back", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const work = await setup(
      [call("workspace__write_file", { path: "a.txt", content: "b\n" }), report("done")],
      {
        id: "slow-tests",
        constraints: { timeout_ms: 3000 },
        test_command: "sleep 30",
      },
    );
    const beforeHash = await hashOf(root);
    const { exitCode, result } = await work.run(root);
    expect(result?.status).toBe("timeout");
    expect(exitCode).toBe(1);
    expect(await hashOf(root)).toBe(beforeHash);
  });

  it("timeout: an agent's run that outlives timeout_ms is stopped, ends as timeout and rolls back", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const work = await setup(
      [
        call("workspace__write_file", { path: "a.txt", content: "half-done\n" }),
        call("workspace__write_file", { path: "new.txt", content: "new\n" }),
        // The model never answers again within the item's time.
        delayStep(3_600_000, report("too late")),
      ],
      { id: "slow-agent", constraints: { timeout_ms: 3000 } },
    );
    const beforeHash = await hashOf(root);
    const { exitCode, result } = await work.run(root);
    expect(result?.status).toBe("timeout");
    expect(result?.error).toBe("Timed out: the work item's timeout_ms 3000 passed during the agent's run");
    expect(exitCode).toBe(1);
    // What the agent had done by then is what the receipt records, and what was rolled back.
    expect(result?.modified_files).toEqual([join(root, "a.txt")]);
    expect(result?.created_files).toEqual([join(root, "new.txt")]);
    expect(result?.output_hash).toBe(beforeHash);
    expect(await hashOf(root)).toBe(beforeHash);
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("a\n");
    await expect(stat(join(root, "new.txt"))).rejects.toThrow();
    expect(git(root, "status", "--porcelain")).toBe("");
    const receipt = await receiptOf(result?.receipt_path ?? "");
    expect(receipt).toMatchObject({ status: "timeout", output_hash: beforeHash });
    expect(receipt.after_hash).not.toBe(beforeHash);
  });

  it("a tool error the agent gets past (a refused path, then the right one) does not fail the item", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const work = await setup(
      [
        call("workspace__write_file", { path: "../outside.txt", content: "x\n" }),
        call("workspace__write_file", { path: "a.txt", content: "b\n" }),
        report("done"),
      ],
      { id: "recovers" },
    );
    const { exitCode, result } = await work.run(root);
    expect(result?.status).toBe("success");
    expect(exitCode).toBe(0);
    expect(result?.metrics.tool_ops_count).toBe(2);
    expect(result?.modified_files).toEqual([join(root, "a.txt")]);
  });

  it("a tool error the agent cannot get past ends as failure with rollback (the run did not succeed)", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    // Every answer is a refused write into .git: the run exhausts its turns without a report.
    const work = await setup(
      [
        call("workspace__write_file", { path: "a.txt", content: "changed\n" }),
        ...Array.from({ length: 3 }, () =>
          call("workspace__write_file", { path: ".git/hooks/pre-commit", content: "x" }),
        ),
      ],
      { id: "stuck" },
    );
    await writeAgentMaxTurns(work.directory, 4);
    const beforeHash = await hashOf(root);
    const { exitCode, result } = await work.run(root);
    expect(result?.status).toBe("failure");
    expect(result?.error).toMatch(/^The agent's run ended FAILED_/);
    expect(exitCode).toBe(1);
    expect(await hashOf(root)).toBe(beforeHash);
    await expect(stat(join(root, ".git/hooks/pre-commit"))).rejects.toThrow();
  });

  it("--commit: one commit on the current branch with only the item's files; other work stays uncommitted", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "mine.txt": "mine\n" });
    await import("node:fs/promises").then((fs) => fs.writeFile(join(root, "mine.txt"), "my unstaged work\n"));
    const work = await setup(
      [call("workspace__write_file", { path: "a.txt", content: "agent\n" }), report("Update a\n\nbody")],
      { id: "commit-me" },
    );
    const head = git(root, "rev-parse", "HEAD");
    const { exitCode, result } = await work.run(root, ["--commit"]);
    expect(exitCode).toBe(0);
    expect(git(root, "rev-parse", "HEAD^")).toBe(head);
    expect(git(root, "log", "-1", "--format=%s")).toBe("commit-me: Update a");
    expect(git(root, "show", "--name-only", "--format=", "HEAD")).toBe("a.txt");
    expect(git(root, "status", "--porcelain")).toBe("M mine.txt");
    expect((await receiptOf(result?.receipt_path ?? "")).commit).toBe(git(root, "rev-parse", "HEAD"));
  });

  it("receipts form a chain; the same change from the same state again is denied as a duplicate", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const script = [call("workspace__write_file", { path: "b.txt", content: "b\n" }), report("done")];
    const first = await setup(script, { id: "same" });
    const one = await first.run(root);
    expect(one.result?.status).toBe("success");
    // Back to the before state by hand, then the same item again.
    await import("node:fs/promises").then((fs) => fs.rm(join(root, "b.txt")));
    const second = await setup(script, { id: "same" });
    await import("node:fs/promises").then((fs) => fs.copyFile(first.itemPath, second.itemPath));
    const two = await second.run(root);
    expect(two.result?.status).toBe("denied");
    expect(two.result?.denial_reason).toContain(`Duplicate run: receipt ${one.result?.receipt_id}`);
    const receipt = await receiptOf(two.result?.receipt_path ?? "");
    expect(receipt.previous_receipt_hash).toBe(
      (await receiptOf(one.result?.receipt_path ?? "")).receipt_hash,
    );
    expect((await cli(["work", "verify", one.result?.receipt_path ?? "", "--json"])).exitCode).toBe(0);
  });

  it("verify names a receipt whose content was changed", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const work = await setup(
      [call("workspace__write_file", { path: "a.txt", content: "b\n" }), report("done")],
      {
        id: "tamper",
      },
    );
    const { result } = await work.run(root);
    const path = result?.receipt_path ?? "";
    const receipt = await receiptOf(path);
    await import("node:fs/promises").then((fs) =>
      fs.writeFile(path, JSON.stringify({ ...receipt, status: "denied" })),
    );
    const verified = await cli(["work", "verify", path, "--json"]);
    expect(verified.exitCode).toBe(1);
    const problems = JSON.parse(verified.stdout).problems as string[];
    expect(problems.some((problem) => problem.includes("it was changed"))).toBe(true);
  });

  it("an invalid work item or a folder that is no repository: exit 4, nothing run", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const work = await setup([report("never")], { id: "ok", constraints: { max_files: 0 } });
    const invalid = await work.run(root);
    expect(invalid.exitCode).toBe(4);
    expect(invalid.stderr).toContain("WORK_ITEM_INVALID");
    expect(invalid.stderr).toContain("constraints.max_files");
    const notRepository = await setup([report("never")], { id: "ok" });
    const outside = await notRepository.run(notRepository.directory);
    expect(outside.exitCode).toBe(4);
    expect(outside.stderr).toContain("WORK_REPOSITORY_INVALID");
    expect(work.server.requests.length + notRepository.server.requests.length).toBe(0);
  });
});

async function writeAgentMaxTurns(directory: string, maxTurns: number): Promise<void> {
  const fs = await import("node:fs/promises");
  const { agentFile } = await import("../cli/cli-harness.js");
  await fs.writeFile(join(directory, "agent.md"), agentFile(`models: [local/m]\nmaxTurns: ${maxTurns}`));
}

describe("receipts in the run store", () => {
  it("are stored for the item's tenant; another tenant's view does not see them", async () => {
    const { openRunStore } = await import("../../src/store/open-run-store.js");
    const { systemEnvironment } = await import("../../src/foundation/environment.js");
    const root = await gitRepository({ "a.txt": "a\n" });
    const work = await setup(
      [call("workspace__write_file", { path: "a.txt", content: "b\n" }), report("done")],
      {
        id: "stored",
      },
    );
    const storePath = join(work.directory, "store.db");
    const { result } = await work.run(root, ["--store", storePath, "--tenant", "team-a"]);
    expect(result?.status).toBe("success");
    const store = await openRunStore({
      url: `sqlite:${storePath}`,
      environment: systemEnvironment,
      tenantId: "team-a",
    });
    try {
      const stored = await store.getWorkReceipt(result?.receipt_id ?? "");
      const onDisk = await receiptOf(result?.receipt_path ?? "");
      expect(stored).toMatchObject({
        runId: result?.run_id,
        status: "success",
        tenantId: "team-a",
        repository: root,
      });
      expect(stored?.receipt).toEqual(onDisk);
      expect(stored?.receiptHash).toBe(onDisk.receipt_hash);
      expect((await store.getRun(result?.run_id ?? ""))?.tenantId).toBe("team-a");
      expect(await store.forTenant("team-b").getWorkReceipt(result?.receipt_id ?? "")).toBeNull();
      expect(await store.forTenant(null).listWorkReceipts({ repository: root })).toEqual([]);
      expect(
        (await store.listWorkReceipts({ repository: root })).map((receipt) => receipt.receiptId),
      ).toEqual([result?.receipt_id]);
    } finally {
      await store.close();
    }
  });
});
