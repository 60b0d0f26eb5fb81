import { gitText } from "./git-command.js";
import type { StateListing } from "./state-file-on-disk.js";
import type { WorkRepository } from "./work-repository.js";
import { workingTreeState } from "./working-tree-state.js";

// Snapshot commits name Charter as author and committer so that no user identity is needed (or recorded).
const snapshotIdentity = {
  GIT_AUTHOR_NAME: "Charter",
  GIT_AUTHOR_EMAIL: "charter@localhost",
  GIT_COMMITTER_NAME: "Charter",
  GIT_COMMITTER_EMAIL: "charter@localhost",
};

/** A snapshot taken: its commit and the state listing of the files it records (what the state hash is over). */
export interface FrozenState {
  readonly commit: string;
  readonly listing: StateListing;
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
  return (await freezeWorkingTreeState(repository, ref, message)).commit;
}

/** `freezeWorkingTree`, with the state listing of the snapshot from the same pass over the working tree. */
export async function freezeWorkingTreeState(
  repository: WorkRepository,
  ref: string,
  message: string,
): Promise<FrozenState> {
  const [{ tree, listing }, head] = await Promise.all([workingTreeState(repository), headCommit(repository)]);
  const commit = await gitText(["commit-tree", tree, ...(head === null ? [] : ["-p", head]), "-m", message], {
    cwd: repository.root,
    env: snapshotIdentity,
  });
  await gitText(["update-ref", ref, commit], { cwd: repository.root });
  return { commit, listing };
}

/** HEAD's commit, or null on a branch with no commit yet. */
export async function headCommit(repository: WorkRepository): Promise<string | null> {
  const text = await gitText(["rev-parse", "-q", "--verify", "HEAD^{commit}"], {
    cwd: repository.root,
    acceptedExitCodes: [1, 128],
  });
  return text === "" ? null : text;
}
