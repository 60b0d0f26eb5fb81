import { randomUUID } from "node:crypto";
import { copyFile, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";
import type { WorkRepository } from "./work-repository.js";

/**
 * Runs `work` with a temporary index file beside the real one (GIT_INDEX_FILE), so that nothing a snapshot does
 * touches the user's index. `fromRealIndex` starts it as a copy of the real index: its stat cache lets `git add`
 * skip unchanged files, and tracked files that an ignore rule matches stay tracked.
 */
export async function withTemporaryIndex<T>(
  repository: WorkRepository,
  fromRealIndex: boolean,
  work: (env: Readonly<Record<string, string>>) => Promise<T>,
): Promise<T> {
  const path = join(repository.gitDirectory, `charter-index-${randomUUID()}`);
  try {
    if (fromRealIndex) {
      try {
        const realIndex = join(repository.gitDirectory, "index");
        await copyFile(realIndex, path);
        // The copy keeps the real index's modification time: git judges an entry whose file changed in the same
        // second as the index was written ("racily clean") by that time, and re-reads its content. A copy stamped
        // now would make such a change, when it keeps the file's size, look unchanged to `git add`.
        const { atime, mtime } = await stat(realIndex);
        await utimes(path, atime, mtime);
      } catch (error) {
        // A repository without an index yet (nothing ever added): the temporary index starts empty.
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
    return await work({ GIT_INDEX_FILE: path });
  } finally {
    await rm(path, { force: true });
  }
}
