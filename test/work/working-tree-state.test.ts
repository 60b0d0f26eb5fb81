import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFile, chmod, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { blake3Hex } from "../../src/foundation/content-hash.js";
import { blobHashCacheFormat, blobHashCachePath } from "../../src/work/blob-content-hashes.js";
import { freezeWorkingTreeState } from "../../src/work/freeze-working-tree.js";
import { snapshotListing, stateHash, workingTreeListing } from "../../src/work/state-listing.js";
import { openWorkRepository } from "../../src/work/work-repository.js";
import { diskListing } from "./disk-listing.js";
import { git, gitRepository, writeRepositoryFile } from "./git-fixture.js";

describe("the state listing taken from git's own pass over the working tree", () => {
  it("is the listing of the bytes on disk, also where git stores other bytes or does not look at the file", async () => {
    const root = await gitRepository({
      ".gitattributes": "*.crlf text eol=lf\n*.up filter=upper\n*.id ident\n",
      ".gitignore": "ignored/\n",
      // Stored with LF by git (the attribute), CRLF on disk.
      "lines.crlf": "one\r\ntwo\r\n",
      "shout.up": "quiet\n",
      "version.id": "$Id$\n",
      "assumed.txt": "assumed\n",
      "sparse.txt": "sparse\n",
      "sparse-gone.txt": "gone\n",
      "run.sh": "echo\n",
      "deleted.txt": "deleted\n",
      "empty.txt": "",
      "name with\ttab and space.txt": "odd\n",
    });
    await writeFile(join(root, "big.bin"), randomBytes(1_500_000));
    await symlink("lines.crlf", join(root, "link"));
    git(root, "add", "big.bin", "link");
    git(root, "commit", "-q", "-m", "more");
    // A clean filter that changes what git stores, configured after the file was committed.
    git(root, "config", "filter.upper.clean", "tr a-z A-Z");
    await writeFile(join(root, "shout.up"), "louder\n");
    // Entries git does not compare with the disk: changed there all the same.
    git(root, "update-index", "--assume-unchanged", "assumed.txt");
    await writeFile(join(root, "assumed.txt"), "changed behind git's back\n");
    git(root, "update-index", "--skip-worktree", "sparse.txt", "sparse-gone.txt");
    await writeFile(join(root, "sparse.txt"), "changed in a sparse entry\n");
    await rm(join(root, "sparse-gone.txt"));
    // An execute bit git is told not to trust.
    git(root, "config", "core.fileMode", "false");
    await chmod(join(root, "run.sh"), 0o755);
    await rm(join(root, "deleted.txt"));
    await writeRepositoryFile(root, "ignored/out.txt", "ignored\n");
    await writeRepositoryFile(root, "new/untracked.txt", "untracked\n");
    // An embedded repository is a folder of the state, not a file.
    await writeRepositoryFile(root, "nested/inner.txt", "inner\n");
    git(join(root, "nested"), "init", "-q");
    git(join(root, "nested"), "add", "inner.txt");
    git(join(root, "nested"), "commit", "-q", "-m", "inner");

    const repository = await openWorkRepository(root);
    const expected = await diskListing(root);
    expect(expected.get("run.sh")?.mode).toBe("100755");
    expect(expected.has("sparse-gone.txt")).toBe(false);
    // Every blob read once (no cache yet), then the same from the cache.
    const cold = await workingTreeListing(repository);
    expect(cold).toEqual(expected);
    const warm = await workingTreeListing(repository);
    expect(warm).toEqual(expected);
    expect(stateHash(warm)).toBe(stateHash(expected));
    const frozen = await freezeWorkingTreeState(repository, "refs/charter/snapshots/odd/before", "before");
    expect(frozen.listing).toEqual(expected);
  });

  it("records the execute bit on disk in the snapshot when core.fileMode is false, so the snapshot hashes alike", async () => {
    const root = await gitRepository({ "run.sh": "echo\n", "a.txt": "a\n" });
    git(root, "config", "core.fileMode", "false");
    await chmod(join(root, "run.sh"), 0o755);
    const repository = await openWorkRepository(root);
    const { commit, listing } = await freezeWorkingTreeState(
      repository,
      "refs/charter/snapshots/m/before",
      "m",
    );
    expect(git(root, "ls-tree", commit, "run.sh").split(" ")[0]).toBe("100755");
    expect(stateHash(await snapshotListing(repository, commit))).toBe(stateHash(listing));
    expect(stateHash(listing)).toBe(stateHash(await diskListing(root)));
  });

  it("remembers each blob's BLAKE3 by its git id in the git folder; a foreign or torn cache changes nothing", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "src/b.txt": "b\n" });
    const repository = await openWorkRepository(root);
    const expected = stateHash(await diskListing(root));
    expect(stateHash(await workingTreeListing(repository))).toBe(expected);
    const cachePath = blobHashCachePath(repository);
    const lines = (await readFile(cachePath, "utf8")).trimEnd().split("\n");
    expect(lines[0]).toBe(blobHashCacheFormat);
    const blobOf = (path: string) => git(root, "rev-parse", `HEAD:${path}`);
    const content = (object: string) => execFileSync("git", ["cat-file", "blob", object], { cwd: root });
    expect(new Set(lines.slice(1))).toEqual(
      new Set(["a.txt", "src/b.txt"].map((path) => `${blobOf(path)} ${blake3Hex(content(blobOf(path)))}`)),
    );

    // A line cut short (a process killed while appending) is skipped; the new file's blob is appended after it.
    await appendFile(cachePath, `${blobOf("a.txt").slice(0, 20)}`);
    await writeRepositoryFile(root, "c.txt", "c\n");
    expect(stateHash(await workingTreeListing(repository))).toBe(stateHash(await diskListing(root)));
    expect((await readFile(cachePath, "utf8")).split("\n")).toContain(
      `${git(root, "hash-object", "c.txt")} ${blake3Hex("c\n")}`,
    );

    // A file of another format is not read, and is written anew.
    await writeFile(cachePath, `something-else/9\n${blobOf("a.txt")} ${"0".repeat(64)}\n`);
    expect(stateHash(await workingTreeListing(repository))).toBe(stateHash(await diskListing(root)));
    expect((await readFile(cachePath, "utf8")).split("\n")[0]).toBe(blobHashCacheFormat);
  });
});
