import { gitText } from "./git-command.js";
import { withTemporaryIndex } from "./temporary-index.js";
import type { WorkRepository } from "./work-repository.js";

// Snapshot commits name Charter as author and committer so that no user identity is needed (or recorded).
const snapshotIdentity = {
  GIT_AUTHOR_NAME: "Charter",
  GIT_AUTHOR_EMAIL: "charter@localhost",
  GIT_COMMITTER_NAME: "Charter",
  GIT_COMMITTER_EMAIL: "charter@localhost",
};

/** The tree object of the working tree as it is now (tracked and untracked files that are not ignored). */
export async function workingTreeObject(repository: WorkRepository): Promise<string> {
  return withTemporaryIndex(repository, true, async (env) => {
    await gitText(["add", "--all", "--", "."], { cwd: repository.root, env });
    return gitText(["write-tree"], { cwd: repository.root, env });
  });
}

/**
 * Freeze: records the whole working tree as a commit object under `ref` (refs/charter/snapshots/<run-id>/before),
 * built through a temporary index. The user's branch, index, stash and HEAD are untouched; the commit's parent
 * is HEAD's commit when there is one, so `git log` on the ref shows where the snapshot was taken.
 */
export async function freezeWorkingTree(
  repository: WorkRepository,
  ref: string,
  message: string,
): Promise<string> {
  const tree = await workingTreeObject(repository);
  const head = await headCommit(repository);
  const commit = await gitText(["commit-tree", tree, ...(head === null ? [] : ["-p", head]), "-m", message], {
    cwd: repository.root,
    env: snapshotIdentity,
  });
  await gitText(["update-ref", ref, commit], { cwd: repository.root });
  return commit;
}

/** HEAD's commit, or null on a branch with no commit yet. */
export async function headCommit(repository: WorkRepository): Promise<string | null> {
  const text = await gitText(["rev-parse", "-q", "--verify", "HEAD^{commit}"], {
    cwd: repository.root,
    acceptedExitCodes: [1, 128],
  });
  return text === "" ? null : text;
}
