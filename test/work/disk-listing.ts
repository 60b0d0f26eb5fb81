import { execFileSync } from "node:child_process";
import { lstat, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { blake3Hex } from "../../src/foundation/content-hash.js";
import type { StateFile, StateListing } from "../../src/work/state-listing.js";

/**
 * The state hash's definition computed the plain way, for tests to hold Charter's listing against: every file git
 * lists (tracked, and untracked but not ignored) read from disk, its mode from the owner's execute bit (or a
 * symbolic link, hashed over its target), BLAKE3 of its bytes.
 */
export async function diskListing(root: string): Promise<StateListing> {
  const paths = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: root,
    encoding: "utf8",
  })
    .split("\0")
    .filter((path) => path !== "");
  const listing = new Map<string, StateFile>();
  for (const path of new Set(paths)) {
    const absolute = join(root, path);
    const stats = await lstat(absolute).catch(() => null);
    if (stats === null) continue;
    if (stats.isSymbolicLink()) {
      listing.set(path, {
        mode: "120000",
        hash: blake3Hex(Buffer.from(await readlink(absolute, { encoding: "buffer" }))),
      });
    } else if (stats.isFile()) {
      listing.set(path, {
        mode: (stats.mode & 0o100) !== 0 ? "100755" : "100644",
        hash: blake3Hex(await readFile(absolute)),
      });
    }
  }
  return listing;
}
