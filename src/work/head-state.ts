import { copyFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { headCommit } from "./freeze-working-tree.js";
import { gitText } from "./git-command.js";
import type { WorkRepository } from "./work-repository.js";

/** Where HEAD pointed when a work item started: its branch (null when detached) and commit (null when unborn). */
export interface HeadState {
  readonly branch: string | null;
  readonly commit: string | null;
}

export async function readHeadState(repository: WorkRepository): Promise<HeadState> {
  const [branch, commit] = await Promise.all([
    gitText(["symbolic-ref", "-q", "HEAD"], { cwd: repository.root, acceptedExitCodes: [1] }),
    headCommit(repository),
  ]);
  return { branch: branch === "" ? null : branch, commit };
}

/** Keeps a byte copy of the user's index (absent when the repository has none yet). */
export async function saveIndex(repository: WorkRepository, copyPath: string): Promise<boolean> {
  try {
    await copyFile(join(repository.gitDirectory, "index"), copyPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

/**
 * Puts HEAD, its branch and the index back as they were when the item started: a command the agent ran (`git
 * commit`, `git checkout`, `git add`) is rolled back with the files.
 */
export async function restoreHeadState(
  repository: WorkRepository,
  state: HeadState,
  indexCopy: string | null,
): Promise<void> {
  const cwd = repository.root;
  if (state.branch !== null) {
    // HEAD back on its branch, while the branch's commit now is read (what HEAD will resolve to).
    const [, branchCommit] = await Promise.all([
      gitText(["symbolic-ref", "HEAD", state.branch], { cwd }),
      gitText(["rev-parse", "-q", "--verify", `${state.branch}^{commit}`], {
        cwd,
        acceptedExitCodes: [1, 128],
      }),
    ]);
    const now = branchCommit === "" ? null : branchCommit;
    if (state.commit === null) {
      if (now !== null) await gitText(["update-ref", "-d", state.branch], { cwd });
    } else if (now !== state.commit) await gitText(["update-ref", state.branch, state.commit], { cwd });
  } else if (state.commit !== null) {
    await gitText(["update-ref", "--no-deref", "HEAD", state.commit], { cwd });
  }
  const index = join(repository.gitDirectory, "index");
  if (indexCopy === null) await rm(index, { force: true });
  else await copyFile(indexCopy, index);
}
