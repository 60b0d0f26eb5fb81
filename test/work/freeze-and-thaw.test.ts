import { chmod, cp, mkdtemp, readFile, rm, stat, symlink, unlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freezeWorkingTree } from "../../src/work/freeze-working-tree.js";
import { readHeadState, restoreHeadState, saveIndex } from "../../src/work/head-state.js";
import { snapshotListing, stateHash, workingTreeListing } from "../../src/work/state-listing.js";
import { thawWorkingTree } from "../../src/work/thaw-working-tree.js";
import { openWorkRepository } from "../../src/work/work-repository.js";
import { diskListing } from "./disk-listing.js";
import { git, gitRepository, writeRepositoryFile } from "./git-fixture.js";

async function hashOf(root: string): Promise<string> {
  return stateHash(await workingTreeListing(await openWorkRepository(root)));
}

describe("the state hash", () => {
  it("covers tracked and untracked files that are not ignored, and nothing else", async () => {
    const root = await gitRepository({ "a.txt": "a\n", ".gitignore": "build/\n" });
    const repository = await openWorkRepository(root);
    const listing = await workingTreeListing(repository);
    expect([...listing.keys()].sort()).toEqual([".gitignore", "a.txt"]);
    const before = stateHash(listing);
    await writeRepositoryFile(root, "build/out.bin", "ignored");
    expect(await hashOf(root)).toBe(before);
    await writeRepositoryFile(root, "new.txt", "untracked");
    expect(await hashOf(root)).not.toBe(before);
  });

  it("is independent of timestamps and of where the repository lives, and sees content and mode", async () => {
    const root = await gitRepository({ "src/a.txt": "a\n", "run.sh": "echo\n" });
    const first = await hashOf(root);
    const copy = await mkdtemp(join(tmpdir(), "charter-work-copy-"));
    await cp(root, copy, { recursive: true });
    await writeFile(join(copy, "src/a.txt"), "a\n"); // rewritten: a new mtime, same bytes
    expect(await hashOf(copy)).toBe(first);
    await chmod(join(copy, "run.sh"), 0o755);
    expect(await hashOf(copy)).not.toBe(first);
    await chmod(join(copy, "run.sh"), 0o644);
    await writeFile(join(copy, "src/a.txt"), "b\n");
    expect(await hashOf(copy)).not.toBe(first);
  });

  it("of a snapshot commit equals the hash of the working tree it recorded", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "bin/tool": "#!/bin/sh\n" });
    await chmod(join(root, "bin/tool"), 0o755);
    await symlink("a.txt", join(root, "link"));
    await writeRepositoryFile(root, "untracked.txt", "u");
    const repository = await openWorkRepository(root);
    const commit = await freezeWorkingTree(repository, "refs/charter/snapshots/test/before", "snapshot");
    expect(stateHash(await snapshotListing(repository, commit))).toBe(await hashOf(root));
  });
});

describe("freeze and thaw", () => {
  it("freeze records the working tree under the ref without touching branch, index, stash or HEAD", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    await writeRepositoryFile(root, "a.txt", "staged\n");
    git(root, "add", "a.txt");
    await writeRepositoryFile(root, "a.txt", "unstaged\n");
    await writeRepositoryFile(root, "new.txt", "new\n");
    const status = git(root, "status", "--porcelain");
    const head = git(root, "rev-parse", "HEAD");
    const index = await readFile(join(root, ".git/index"));
    const repository = await openWorkRepository(root);
    const commit = await freezeWorkingTree(repository, "refs/charter/snapshots/r1/before", "snapshot");
    expect(git(root, "rev-parse", "refs/charter/snapshots/r1/before")).toBe(commit);
    expect(git(root, "show", `${commit}:a.txt`)).toBe("unstaged");
    expect(git(root, "show", `${commit}:new.txt`)).toBe("new");
    expect(git(root, "rev-parse", "HEAD")).toBe(head);
    expect(git(root, "symbolic-ref", "HEAD")).toBe("refs/heads/main");
    expect(git(root, "status", "--porcelain")).toBe(status);
    expect(await readFile(join(root, ".git/index"))).toEqual(index);
    expect(git(root, "stash", "list")).toBe("");
  });

  it("thaw restores modified, created and deleted files exactly and leaves ignored files alone", async () => {
    const root = await gitRepository({
      "a.txt": "a\n",
      "gone.txt": "gone\n",
      "keep/b.txt": "b\n",
      ".gitignore": "*.log\n",
    });
    await writeRepositoryFile(root, "untracked.txt", "mine\n");
    const repository = await openWorkRepository(root);
    const before = await hashOf(root);
    const commit = await freezeWorkingTree(repository, "refs/charter/snapshots/r2/before", "snapshot");
    const untouchedTime = (await stat(join(root, "keep/b.txt"))).mtimeMs;
    // What an agent might do: modify, create (in a new folder), delete, make executable, leave a log.
    await writeRepositoryFile(root, "a.txt", "changed\n");
    await writeRepositoryFile(root, "deep/new/file.txt", "created\n");
    await unlink(join(root, "gone.txt"));
    await unlink(join(root, "untracked.txt"));
    await writeRepositoryFile(root, "debug.log", "ignored\n");
    expect(await hashOf(root)).not.toBe(before);
    await thawWorkingTree(repository, commit);
    expect(await hashOf(root)).toBe(before);
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("a\n");
    expect(await readFile(join(root, "gone.txt"), "utf8")).toBe("gone\n");
    expect(await readFile(join(root, "untracked.txt"), "utf8")).toBe("mine\n");
    await expect(stat(join(root, "deep"))).rejects.toThrow();
    expect(await readFile(join(root, "debug.log"), "utf8")).toBe("ignored\n");
    expect((await stat(join(root, "keep/b.txt"))).mtimeMs).toBe(untouchedTime);
    // The user's view is what it was: untracked.txt untracked again, nothing staged.
    expect(git(root, "status", "--porcelain")).toBe("?? untracked.txt");
  });

  it("thaw with the head state rolls back a commit, a branch switch and staging the agent did", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    const repository = await openWorkRepository(root);
    const head = await readHeadState(repository);
    const indexCopy = join(await mkdtemp(join(tmpdir(), "charter-index-")), "index");
    await saveIndex(repository, indexCopy);
    const commit = await freezeWorkingTree(repository, "refs/charter/snapshots/r3/before", "snapshot");
    await writeRepositoryFile(root, "a.txt", "agent\n");
    git(root, "commit", "-q", "-am", "agent commit");
    git(root, "checkout", "-q", "-b", "elsewhere");
    await writeRepositoryFile(root, "b.txt", "b\n");
    git(root, "add", "b.txt");
    await thawWorkingTree(repository, commit);
    await restoreHeadState(repository, head, indexCopy);
    expect(git(root, "symbolic-ref", "HEAD")).toBe("refs/heads/main");
    expect(git(root, "rev-parse", "HEAD")).toBe(head.commit);
    expect(git(root, "status", "--porcelain")).toBe("");
    await rm(indexCopy);
  });
});

describe("a change git's stat cache cannot see", () => {
  it("freeze and thaw read the content of a file changed in the same second as the index was written", async () => {
    const root = await gitRepository({ "a.txt": "a\n" });
    git(root, "config", "core.trustctime", "false");
    // The file and the index carry one time, as when a commit and an edit fall in the same second.
    const moment = new Date(1_700_000_000_000);
    await utimes(join(root, "a.txt"), moment, moment);
    git(root, "add", "a.txt");
    await utimes(join(root, ".git", "index"), moment, moment);
    const repository = await openWorkRepository(root);
    const before = await freezeWorkingTree(repository, "refs/charter/snapshots/racy/before", "before");
    // The same size and time: only the content says it changed.
    await writeFile(join(root, "a.txt"), "A\n");
    await utimes(join(root, "a.txt"), moment, moment);
    const after = await freezeWorkingTree(repository, "refs/charter/snapshots/racy/after", "after");
    expect(git(root, "show", `${after}:a.txt`).trim()).toBe("A");
    expect(stateHash(await snapshotListing(repository, after))).toBe(stateHash(await diskListing(root)));
    expect(stateHash(await workingTreeListing(repository))).toBe(stateHash(await diskListing(root)));
    await thawWorkingTree(repository, before);
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("a\n");
  });
});
