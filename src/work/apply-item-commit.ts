import { gitCommand, gitText } from "./git-command.js";
import type { WorkRepository } from "./work-repository.js";

/** The result of merging an item's commit onto HEAD: a new commit (not yet on the branch), or the files in conflict. */
export type ItemMerge =
  | { readonly kind: "merged"; readonly commit: string }
  | { readonly kind: "conflict"; readonly files: readonly string[] };

/**
 * The item's commit (made in its worktree on the level's base) replayed on `head` as a cherry-pick would, but in
 * git's object database only (`git merge-tree --write-tree`: the merge base of `head` and the item's commit is the
 * level's base, the item commit's parent): nothing in the working tree, index or branch changes, so a conflict
 * leaves the repository exactly as it was. The new commit keeps the item commit's message and author.
 */
export async function mergeItemCommit(
  repository: WorkRepository,
  head: string,
  itemCommit: string,
): Promise<ItemMerge> {
  const cwd = repository.root;
  const merged = await gitCommand(
    ["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", head, itemCommit],
    { cwd, acceptedExitCodes: [1] },
  );
  const [tree = "", ...rest] = merged.stdout.toString("utf8").split("\0");
  if (merged.exitCode === 1) {
    return { kind: "conflict", files: [...new Set(rest.filter((file) => file !== ""))].sort() };
  }
  const [name = "", email = "", date = "", message = ""] = (
    await gitText(["show", "-s", "--format=%an%x00%ae%x00%ad%x00%B", "--date=raw", itemCommit], { cwd })
  ).split("\0");
  const commit = await gitText(["commit-tree", tree, "-p", head, "-F", "-"], {
    cwd,
    input: message,
    env: { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_AUTHOR_DATE: date },
  });
  return { kind: "merged", commit };
}

/**
 * Moves the working tree and index from `from` to `to` (`git read-tree -m -u`: only the files that differ are
 * written, and git refuses, changing nothing, rather than overwrite a file changed since), then the branch (or
 * detached HEAD). When the branch cannot be moved, the files are moved back: either everything moved or nothing.
 */
export async function advanceBranch(
  repository: WorkRepository,
  from: string,
  to: string,
  message: string,
): Promise<void> {
  const cwd = repository.root;
  // A file whose stat data is stale (touched, same content) would make read-tree refuse it as changed.
  await gitText(["update-index", "-q", "--refresh"], { cwd, acceptedExitCodes: [1] });
  await gitText(["read-tree", "-m", "-u", from, to], { cwd });
  try {
    await gitText(["update-ref", "-m", `charter work plan: ${message}`, "HEAD", to, from], { cwd });
  } catch (error) {
    await gitText(["read-tree", "-m", "-u", to, from], { cwd });
    throw error;
  }
}
