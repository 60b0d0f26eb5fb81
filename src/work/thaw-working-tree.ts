import { lstat, rm, rmdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { gitCommand, gitText } from "./git-command.js";
import { withTemporaryIndex } from "./temporary-index.js";
import type { WorkRepository } from "./work-repository.js";
import { workingTreeObject } from "./working-tree-state.js";

/**
 * Thaw: restores the working tree exactly to a snapshot commit. Files changed since are written back, files
 * created since are removed (with the folders they leave empty), files deleted since are restored; ignored files
 * are never touched, and neither are the user's index, branch and HEAD (see `restoreHeadState` for those).
 * Only what differs is written, so unchanged files keep their timestamps.
 */
export async function thawWorkingTree(repository: WorkRepository, snapshot: string): Promise<void> {
  const now = await workingTreeObject(repository);
  const { stdout } = await gitCommand(
    ["diff-tree", "-r", "-z", "--no-renames", "--name-status", `${snapshot}^{tree}`, now],
    { cwd: repository.root },
  );
  const fields = stdout.toString("utf8").split("\0");
  const created: string[] = [];
  const restored: string[] = [];
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const status = fields[index];
    const path = fields[index + 1] as string;
    // diff-tree from the snapshot to now: A = created since, D = deleted since, M/T = changed since.
    if (status === "A") created.push(path);
    else restored.push(path);
  }
  for (const path of created) await removeCreatedFile(repository.root, path);
  if (restored.length === 0) return;
  await withTemporaryIndex(repository, false, async (env) => {
    await gitText(["read-tree", snapshot], { cwd: repository.root, env });
    await gitText(["checkout-index", "--force", "-z", "--stdin"], {
      cwd: repository.root,
      env,
      input: `${restored.join("\0")}\0`,
    });
  });
}

async function removeCreatedFile(root: string, path: string): Promise<void> {
  const absolute = join(root, path);
  const stats = await lstat(absolute).catch(() => null);
  if (stats === null || stats.isDirectory()) return;
  await rm(absolute, { force: true });
  // Folders the created file leaves empty go too (git does not record folders, so the snapshot has none).
  let folder = dirname(absolute);
  while (folder.startsWith(`${root}/`)) {
    try {
      await rmdir(folder);
    } catch {
      break;
    }
    folder = dirname(folder);
  }
}
