import { appendFile, readFile, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { hashBlobs } from "./hash-blobs.js";
import type { WorkRepository } from "./work-repository.js";

/** First line of the cache file; a file that does not start with it is ignored and written anew. */
export const blobHashCacheFormat = "charter-blob-blake3/1";

const entryPattern = /^([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{64})$/;

/** The cache of the repository (shared by its worktrees, as its objects are): git object id -> BLAKE3. */
export function blobHashCachePath(repository: WorkRepository): string {
  return join(repository.commonDirectory, "charter-blob-blake3");
}

/** What the cache file held when it was read. */
export interface BlobHashCache {
  readonly known: ReadonlyMap<string, string>;
  /** Lines in the file (0 when it was absent or foreign: it is then written anew). */
  readonly lines: number;
  /** Whether the file's last line was cut short: what is appended starts on a new line. */
  readonly torn: boolean;
}

// What this process last read of each cache file (by path), with the file's size then. An entry never goes stale
// (a blob id names one content), so a file is parsed again only when its size changed, when another process
// appended to it or rewrote it: the passes of one work item parse it once. A few repositories are remembered.
const remembered = new Map<string, { size: number; cache: BlobHashCache }>();
const rememberedRepositories = 4;

function remember(path: string, size: number, cache: BlobHashCache): void {
  remembered.delete(path);
  remembered.set(path, { size, cache });
  if (remembered.size > rememberedRepositories) remembered.delete(remembered.keys().next().value as string);
}

/** Reads the repository's cache (an absent, unreadable or foreign file is an empty cache). */
export async function readBlobHashCache(repository: WorkRepository): Promise<BlobHashCache> {
  const path = blobHashCachePath(repository);
  const known = new Map<string, string>();
  try {
    const { size } = await stat(path);
    const memory = remembered.get(path);
    if (memory !== undefined && memory.size === size) return memory.cache;
    const text = await readFile(path, "utf8");
    const records = text.split("\n");
    if (records[0] !== blobHashCacheFormat) return { known, lines: 0, torn: false };
    for (let index = 1; index < records.length; index++) {
      // A line cut short by a process that died while appending does not match, and is skipped.
      const match = entryPattern.exec(records[index] as string);
      if (match !== null) known.set(match[1] as string, match[2] as string);
    }
    const cache = { known, lines: records.length, torn: !text.endsWith("\n") };
    remember(path, Buffer.byteLength(text), cache);
    return cache;
  } catch {
    // No cache yet: every blob is read.
    return { known, lines: 0, torn: false };
  }
}

/**
 * BLAKE3 of the content of each git blob named, by object id. A blob's id is the hash of its content, so the
 * BLAKE3 found for an id never goes stale: the ids are remembered in the repository's git folder across runs,
 * and only blobs never seen before are read (one `git cat-file --batch`). That is what lets a state hash of a
 * large working tree cost git's own stat pass instead of reading every file. The cache is only an optimisation:
 * an unreadable or foreign file is ignored, one that cannot be written is left as it was. `cache` is the cache
 * as read already (started early, while git works).
 */
export async function blobContentHashes(
  repository: WorkRepository,
  objects: readonly string[],
  cache: Promise<BlobHashCache> = readBlobHashCache(repository),
): Promise<ReadonlyMap<string, string>> {
  const path = blobHashCachePath(repository);
  const { known, lines, torn } = await cache;
  const missing = [...new Set(objects.filter((object) => !known.has(object)))];
  const found = missing.length === 0 ? new Map<string, string>() : await hashBlobs(repository, missing);
  const result = new Map<string, string>();
  for (const object of objects) result.set(object, known.get(object) ?? (found.get(object) as string));
  if (found.size > 0) {
    try {
      const entry = ([object, hash]: [string, string]) => `${object} ${hash}\n`;
      // Appending is one write with O_APPEND: processes in other worktrees may append at the same time. Once
      // the file holds far more than the working tree needs (old versions of files), it is rewritten with the
      // blobs of this state only (written beside it, then renamed over it).
      if (lines > 0 && lines + found.size <= 2 * result.size + 10_000) {
        await appendFile(path, `${torn ? "\n" : ""}${[...found].map(entry).join("")}`);
        const all = new Map(known);
        for (const [object, hash] of found) all.set(object, hash);
        remember(path, (await stat(path)).size, { known: all, lines: lines + found.size, torn: false });
      } else {
        const temporary = `${path}.${process.pid}.tmp`;
        await writeFile(temporary, `${blobHashCacheFormat}\n${[...result].map(entry).join("")}`);
        await rename(temporary, path);
        remember(path, (await stat(path)).size, { known: result, lines: result.size + 2, torn: false });
      }
    } catch {
      // A read-only git folder: the hashes are still right, only not remembered.
    }
  }
  return result;
}
