import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freezeWorkingTree } from "../../src/work/freeze-working-tree.js";
import { workingTreeListing } from "../../src/work/state-listing.js";
import { parseTestSummary } from "../../src/work/test-summary.js";
import { admissionDenial, workChange } from "../../src/work/work-change.js";
import { openWorkRepository } from "../../src/work/work-repository.js";
import { gitRepository } from "./git-fixture.js";

describe("the change between snapshots", () => {
  it("lists files by kind and counts lines added plus removed, one per binary file", async () => {
    const root = await gitRepository({
      "text.txt": "a\nb\nc\n",
      "old.txt": "x\n",
      "image.bin": "\u0000\u0001",
    });
    const repository = await openWorkRepository(root);
    const before = await freezeWorkingTree(repository, "refs/charter/snapshots/c/before", "before");
    await writeFile(join(root, "text.txt"), "a\nB\nc\nd\n");
    await writeFile(join(root, "image.bin"), Buffer.from([0, 2, 3]));
    await writeFile(join(root, "new.txt"), "n\n");
    await import("node:fs/promises").then((fs) => fs.rm(join(root, "old.txt")));
    const after = await freezeWorkingTree(repository, "refs/charter/snapshots/c/after", "after");
    const change = await workChange(repository, before, after, await workingTreeListing(repository));
    expect(change.modified).toEqual(["image.bin", "text.txt"]);
    expect(change.created).toEqual(["new.txt"]);
    expect(change.deleted).toEqual(["old.txt"]);
    // text.txt: 2 added, 1 removed; new.txt: 1; old.txt: 1; image.bin: binary, 1.
    expect(change.deltaSize).toBe(6);
    expect(Object.keys(change.artifactHashes)).toEqual(["image.bin", "new.txt", "text.txt"]);
    expect(admissionDenial(change, 0, { max_files: 4, max_tool_ops: 1, max_delta_size: 6 }, null)).toBeNull();
    expect(admissionDenial(change, 2, { max_files: 4, max_tool_ops: 1, max_delta_size: 6 }, null)).toBe(
      "Exceeded max tool ops: 2 > 1",
    );
  });
});

describe("test summaries", () => {
  it.each([
    ["vitest", " Test Files  1 failed (1)\n      Tests  2 failed | 5 passed (7)\n", { passed: 5, failed: 2 }],
    ["jest", "Tests:       1 failed, 3 passed, 4 total\n", { passed: 3, failed: 1 }],
    ["pytest", "==== 4 passed, 1 failed in 0.12s ====\n", { passed: 4, failed: 1 }],
    ["pytest all green", "==== 6 passed in 0.12s ====\n", { passed: 6, failed: 0 }],
    ["node:test TAP", "ok 1 - a\n# tests 3\n# pass 2\n# fail 1\n", { passed: 2, failed: 1 }],
    [
      "go test",
      "=== RUN   TestA\n--- PASS: TestA (0.00s)\n--- FAIL: TestB (0.00s)\nFAIL\n",
      { passed: 1, failed: 1 },
    ],
    ["no summary", "all good\n", {}],
  ])("%s", (_name, output, counts) => {
    expect(parseTestSummary(output)).toEqual(counts);
  });
});
