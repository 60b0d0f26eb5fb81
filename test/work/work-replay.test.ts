import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import { stateHash, workingTreeListing } from "../../src/work/state-listing.js";
import { openWorkRepository } from "../../src/work/work-repository.js";
import { charterBinary } from "../cli/cli-harness.js";
import { git, gitRepository } from "./git-fixture.js";
import { call, calls, report, workSetup } from "./work-harness.js";

const servers: ScriptedOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function runScript(script: string): { status: number; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync("bash", [script], {
      encoding: "utf8",
      env: { ...process.env, CHARTER: `${process.execPath} ${charterBinary}` },
      stdio: ["ignore", "pipe", "pipe"],
    });
    return { status: 0, stdout, stderr: "" };
  } catch (error) {
    const failed = error as { status: number; stdout: string; stderr: string };
    return { status: failed.status, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe("replay determinism", () => {
  it("the generated replay script re-runs the item from its before snapshot and reaches the receipt's output hash", async () => {
    const root = await gitRepository({ "src/a.txt": "one\ntwo\n", "old.txt": "old\n" });
    const work = await workSetup(
      [
        call("workspace__read_file", { path: "src/a.txt" }),
        calls(
          ["workspace__edit_file", { path: "src/a.txt", old_string: "two", new_string: "2" }],
          ["workspace__write_file", { path: "src/new.txt", content: "new\n" }],
          ["workspace__delete_file", { path: "old.txt" }],
        ),
        report("done"),
      ],
      { id: "replayable" },
    );
    servers.push(work.server);
    const { result } = await work.run(root);
    expect(result?.status).toBe("success");
    expect(result?.proof_script).toBe(
      join(root, ".charter/work", result?.run_id ?? "", "replay-replayable.sh"),
    );
    // The repository moves on after the item; the replay starts from the before snapshot all the same.
    await writeFile(join(root, "src/a.txt"), "later edits\n");
    const replayed = runScript(result?.proof_script ?? "");
    expect(replayed.stderr).toBe("");
    expect(replayed.stdout).toBe(`replay verified: ${result?.output_hash}\n`);
    expect(replayed.status).toBe(0);
    // The temporary worktree is gone, and the user's working tree is as they left it.
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(1);
    expect(await readFile(join(root, "src/a.txt"), "utf8")).toBe("later edits\n");
  });

  it("names a mismatch and exits 1 when the receipt's after state is not what the replay reaches", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const work = await workSetup(
      [call("workspace__write_file", { path: "a.txt", content: "b\n" }), report("done")],
      {
        id: "mismatch",
      },
    );
    servers.push(work.server);
    const { result } = await work.run(root);
    const script = result?.proof_script ?? "";
    const text = await readFile(script, "utf8");
    await writeFile(script, text.replace(/expected_hash='[0-9a-f]+'/, `expected_hash='${"0".repeat(64)}'`));
    const replayed = runScript(script);
    expect(replayed.status).toBe(1);
    expect(replayed.stderr).toContain(
      `replay mismatch: expected ${"0".repeat(64)}, got ${result?.output_hash}`,
    );
    expect(stateHash(await workingTreeListing(await openWorkRepository(root)))).toBe(result?.output_hash);
  });
});
