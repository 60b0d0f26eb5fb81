import { join } from "node:path";
import { blobContentHashes, readBlobHashCache } from "./blob-content-hashes.js";
import { gitCommand, gitText } from "./git-command.js";
import { type StateFile, type StateListing, stateFileOnDisk } from "./state-file-on-disk.js";
import { withTemporaryIndex } from "./temporary-index.js";
import type { WorkRepository } from "./work-repository.js";

/** The working tree as one tree object, and the state listing of exactly the files it holds. */
export interface WorkingTreeState {
  readonly tree: string;
  readonly listing: StateListing;
}

// A snapshot records the working tree as the state hash sees it: the owner's execute bit and symbolic links as
// they are on disk, whatever the repository's core.fileMode and core.symlinks say about its file system.
const snapshotSettings = ["-c", "core.fileMode=true", "-c", "core.symlinks=true"];

// Attributes under which `git add` stores other bytes than the file's (line endings, filters, $Id$, encodings).
const convertingAttributes = new Set(["text", "eol", "filter", "ident", "working-tree-encoding"]);

/**
 * Adds the whole working tree (tracked files and untracked files that are not ignored) to the temporary index
 * whose environment is `env`. It starts as a copy of the real index, whose stat cache lets git skip files that
 * did not change.
 */
export async function addWorkingTree(
  repository: WorkRepository,
  env: Readonly<Record<string, string>>,
): Promise<void> {
  await gitText([...snapshotSettings, "add", "--all", "--", "."], { cwd: repository.root, env });
}

/** The tree object of the working tree as it is now. */
export async function workingTreeObject(repository: WorkRepository): Promise<string> {
  return withTemporaryIndex(repository, true, async (env) => {
    await addWorkingTree(repository, env);
    return gitText(["write-tree"], { cwd: repository.root, env });
  });
}

/**
 * The working tree's tree object and its state listing, from one pass of `git add` over a temporary index:
 * each file's mode and blob id come from the index git has just brought up to date (with its own stat cache and
 * its rules for files changed in the same instant as the index), and the BLAKE3 of a blob's content from the
 * repository's cache by blob id (`blob-content-hashes.ts`), so that files git did not need to read are not read
 * either. Where the blob may hold other bytes than the file (an attribute that converts content, an entry git
 * does not compare with the disk: assume-unchanged, skip-worktree), the file is read from disk instead: the
 * listing is always the state hash's own, (path, mode, BLAKE3 of the bytes on disk).
 */
export async function workingTreeState(repository: WorkRepository): Promise<WorkingTreeState> {
  const { tree, listing } = await readWorkingTree(repository, true);
  return { tree: tree as string, listing };
}

/** The state listing alone (no tree object is written). */
export async function workingTreeStateListing(repository: WorkRepository): Promise<StateListing> {
  return (await readWorkingTree(repository, false)).listing;
}

async function readWorkingTree(
  repository: WorkRepository,
  writeTree: boolean,
): Promise<{ tree: string | null; listing: StateListing }> {
  const cwd = repository.root;
  const cache = readBlobHashCache(repository);
  const { tree, entries, converted } = await withTemporaryIndex(repository, true, async (env) => {
    await addWorkingTree(repository, env);
    // The tree is written while the index is listed (both only read the index's entries).
    const [treeObject, staged] = await Promise.all([
      writeTree ? gitText(["write-tree"], { cwd, env }) : null,
      gitCommand(["ls-files", "--stage", "-v", "-z"], { cwd, env }),
    ]);
    const indexEntries: IndexEntry[] = [];
    for (const record of staged.stdout.toString("utf8").split("\0")) {
      if (record === "") continue;
      // `<tag> <mode> <object> <stage>\t<path>`
      const tab = record.indexOf("\t");
      const [tag, mode, object, stage] = record.slice(0, tab).split(" ");
      if (tag === undefined || mode === undefined || object === undefined) continue;
      indexEntries.push({ tag: stage === "0" ? tag : "M", mode, object, path: record.slice(tab + 1) });
    }
    return {
      tree: treeObject,
      entries: indexEntries,
      converted: await convertedPaths(repository, env, indexEntries),
    };
  });
  const fromBlobs = entries.filter(
    (entry) => entry.tag === "H" && entry.mode !== "160000" && !converted.has(entry.path),
  );
  const hashes = await blobContentHashes(
    repository,
    fromBlobs.map((entry) => entry.object),
    cache,
  );
  const files = new Map<string, StateFile>();
  for (const entry of fromBlobs) {
    files.set(entry.path, { mode: entry.mode, hash: hashes.get(entry.object) as string });
  }
  for (const entry of entries) {
    // A submodule (a commit in the tree, a folder on disk) is not a file of the state.
    if (entry.mode === "160000" || files.has(entry.path)) continue;
    const file = await stateFileOnDisk(join(cwd, entry.path));
    if (file !== null) files.set(entry.path, file);
  }
  return { tree, listing: files };
}

interface IndexEntry {
  /** `ls-files -v`'s tag: `H` for an entry git compares with the disk; `M` here for a conflict stage. */
  readonly tag: string;
  readonly mode: string;
  readonly object: string;
  readonly path: string;
}

/** The paths with an attribute that makes `git add` store other bytes than the file's. */
async function convertedPaths(
  repository: WorkRepository,
  env: Readonly<Record<string, string>>,
  entries: readonly IndexEntry[],
): Promise<Set<string>> {
  const paths = new Set<string>();
  if (entries.length === 0) return paths;
  // `-a` prints only the attributes that are specified for a path: nothing at all in a repository without any,
  // which costs a fraction of asking for each attribute by name.
  const { stdout } = await gitCommand(["check-attr", "--stdin", "-z", "-a"], {
    cwd: repository.root,
    env,
    input: `${entries.map((entry) => entry.path).join("\0")}\0`,
  });
  const fields = stdout.toString("utf8").split("\0");
  for (let index = 0; index + 2 < fields.length; index += 3) {
    const value = fields[index + 2];
    if (
      convertingAttributes.has(fields[index + 1] as string) &&
      value !== "unspecified" &&
      value !== "unset"
    ) {
      paths.add(fields[index] as string);
    }
  }
  return paths;
}
