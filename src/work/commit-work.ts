import { headCommit } from "./freeze-working-tree.js";
import { gitCommand, gitText } from "./git-command.js";
import { withTemporaryIndex } from "./temporary-index.js";
import type { WorkChange } from "./work-change.js";
import type { WorkRepository } from "./work-repository.js";

/**
 * `--commit`: the admitted change as one commit on the current branch (HEAD's tree plus exactly the item's
 * files, so the user's other uncommitted work is not swept in), under the user's own git identity. The index
 * entries of the item's files are then reset to the new commit; every other index entry is left as it was.
 */
export async function commitWork(
  repository: WorkRepository,
  _before: string,
  after: string,
  change: WorkChange,
  message: string,
): Promise<string> {
  const cwd = repository.root;
  const parent = await headCommit(repository);
  const touched = [...change.created, ...change.modified, ...change.deleted];
  const tree = await withTemporaryIndex(repository, false, async (env) => {
    await gitText(parent === null ? ["read-tree", "--empty"] : ["read-tree", parent], { cwd, env });
    const written = [...change.created, ...change.modified];
    const entries =
      written.length === 0
        ? ""
        : (await gitCommand(["ls-tree", "-z", after, "--", ...written], { cwd })).stdout.toString("utf8");
    const removals = change.deleted.map((path) => `0 ${"0".repeat(40)}\t${path}\0`).join("");
    await gitText(["update-index", "-z", "--index-info"], { cwd, env, input: `${entries}${removals}` });
    return gitText(["write-tree"], { cwd, env });
  });
  const commit = await gitText(
    ["commit-tree", tree, ...(parent === null ? [] : ["-p", parent]), "-m", message],
    {
      cwd,
    },
  );
  await gitText(
    ["update-ref", "-m", `charter work: ${message}`, "HEAD", commit, ...(parent === null ? [] : [parent])],
    {
      cwd,
    },
  );
  if (touched.length > 0) await gitText(["reset", "-q", "--", ...touched], { cwd });
  return commit;
}
