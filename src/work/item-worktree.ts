import { rm } from "node:fs/promises";
import { gitText } from "./git-command.js";
import { openWorkRepository, type WorkRepository } from "./work-repository.js";

/**
 * A git worktree for one item of a plan, at `path`, HEAD detached at `base` (the level's base commit): the agent
 * changes it while the user's working tree stays as it is.
 */
export async function addItemWorktree(
  repository: WorkRepository,
  path: string,
  base: string,
): Promise<WorkRepository> {
  await gitText(["worktree", "add", "--quiet", "--detach", path, base], { cwd: repository.root });
  return openWorkRepository(path);
}

/** Removes an item's worktree (its folder and git's record of it); one already gone is fine. */
export async function removeItemWorktree(repository: WorkRepository, path: string): Promise<void> {
  await gitText(["worktree", "remove", "--force", "--force", path], {
    cwd: repository.root,
    acceptedExitCodes: [128],
  });
  await rm(path, { recursive: true, force: true });
  await gitText(["worktree", "prune"], { cwd: repository.root });
}
