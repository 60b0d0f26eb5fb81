import { blake3Hex, contentHash } from "../foundation/content-hash.js";
import { gitCommand } from "./git-command.js";
import type { StateFile, StateListing } from "./state-file-on-disk.js";
import type { WorkRepository } from "./work-repository.js";
import { workingTreeStateListing } from "./working-tree-state.js";

export type { StateFile, StateListing } from "./state-file-on-disk.js";

/** Version of the canonical listing the state hash is computed over; bump it if the listing ever changes. */
export const stateListingFormat = "charter-work-state/1";

/**
 * The state hash: BLAKE3 over the RFC 8785 canonical JSON of the listing (path, mode, content hash), sorted by
 * path. No time, owner, inode or absolute path enters it, so two clones in the same state hash alike.
 */
export function stateHash(listing: StateListing): string {
  const files = [...listing.entries()]
    .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
    .map(([path, file]) => [path, file.mode, file.hash]);
  return contentHash({ files, format: stateListingFormat });
}

/**
 * The working tree as work items see it: tracked files (in the index) and untracked files that are not ignored.
 * `.git` is never listed; a tracked file deleted from disk is absent; a submodule is skipped. Each file's hash is
 * of its bytes on disk (`workingTreeState` reads them only where git's stat pass says they may have changed).
 */
export async function workingTreeListing(repository: WorkRepository): Promise<StateListing> {
  return workingTreeStateListing(repository);
}

/** The files a snapshot commit records, hashed exactly as `workingTreeListing` hashes files on disk. */
export async function snapshotListing(repository: WorkRepository, commit: string): Promise<StateListing> {
  const { stdout } = await gitCommand(["ls-tree", "-r", "-z", "--full-tree", commit], {
    cwd: repository.root,
  });
  const entries: { path: string; mode: string; object: string }[] = [];
  for (const record of stdout.toString("utf8").split("\0")) {
    if (record === "") continue;
    const tab = record.indexOf("\t");
    const [mode, type, object] = record.slice(0, tab).split(" ");
    // A submodule (a commit in the tree) is skipped, as on disk.
    if (type !== "blob" || mode === undefined || object === undefined) continue;
    entries.push({ path: record.slice(tab + 1), mode: mode === "100755" ? "100755" : mode, object });
  }
  const contents = await readBlobs(
    repository,
    entries.map((entry) => entry.object),
  );
  const listing = new Map<string, StateFile>();
  for (const entry of entries) {
    listing.set(entry.path, {
      mode: entry.mode,
      hash: blake3Hex(contents.get(entry.object) ?? Buffer.alloc(0)),
    });
  }
  return listing;
}

/** The bytes of many blobs through one `git cat-file --batch`. */
export async function readBlobs(
  repository: WorkRepository,
  objects: readonly string[],
): Promise<ReadonlyMap<string, Buffer>> {
  const unique = [...new Set(objects)];
  const blobs = new Map<string, Buffer>();
  if (unique.length === 0) return blobs;
  const { stdout } = await gitCommand(["cat-file", "--batch"], {
    cwd: repository.root,
    input: `${unique.join("\n")}\n`,
  });
  let offset = 0;
  while (offset < stdout.length) {
    const lineEnd = stdout.indexOf(10, offset);
    const [object, , size] = stdout.subarray(offset, lineEnd).toString("utf8").split(" ");
    const length = Number(size);
    blobs.set(object ?? "", stdout.subarray(lineEnd + 1, lineEnd + 1 + length));
    offset = lineEnd + 1 + length + 1;
  }
  return blobs;
}
