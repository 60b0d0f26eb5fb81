import { CharterError } from "../foundation/charter-error.js";
import { gitCommand } from "./git-command.js";
import type { WorkRepository } from "./work-repository.js";

/**
 * A plan commits each item's change on the current branch and moves the working tree with it, so it starts from a
 * clean one: no staged, modified or untracked (not ignored) file. WORK_TREE_NOT_CLEAN names the first few.
 */
export async function requireCleanWorkingTree(repository: WorkRepository): Promise<void> {
  const { stdout } = await gitCommand(["status", "--porcelain=v1", "-z", "--untracked-files=all"], {
    cwd: repository.root,
  });
  const entries = stdout
    .toString("utf8")
    .split("\0")
    .filter((entry) => entry !== "")
    .map((entry) => entry.slice(3));
  if (entries.length === 0) return;
  const shown = entries.slice(0, 5).join(", ");
  throw new CharterError(
    "WORK_TREE_NOT_CLEAN",
    `${repository.root} has uncommitted changes (${shown}${entries.length > 5 ? `, and ${entries.length - 5} more` : ""}): a plan commits each item's change on your branch, so commit or stash them first`,
    { details: { repository: repository.root, files: entries.slice(0, 20) } },
  );
}
