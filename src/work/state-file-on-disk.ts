import { lstat, readFile, readlink } from "node:fs/promises";
import { blake3Hex } from "../foundation/content-hash.js";

/** One file of a state: its git mode (`100644`, `100755`, `120000` for a symbolic link) and BLAKE3 of its bytes. */
export interface StateFile {
  readonly mode: string;
  /** BLAKE3 of the file's bytes (a symbolic link: of its target text). */
  readonly hash: string;
}

/** The files of a state by repository-relative path (`/`-separated, as git writes them). */
export type StateListing = ReadonlyMap<string, StateFile>;

/** A file as the state hash sees it, read from disk; null when there is no file there (or a folder). */
export async function stateFileOnDisk(absolutePath: string): Promise<StateFile | null> {
  let stats: Awaited<ReturnType<typeof lstat>>;
  try {
    stats = await lstat(absolutePath);
  } catch (error) {
    if (
      (error as NodeJS.ErrnoException).code === "ENOENT" ||
      (error as NodeJS.ErrnoException).code === "ENOTDIR"
    )
      return null;
    throw error;
  }
  if (stats.isSymbolicLink()) {
    return {
      mode: "120000",
      hash: blake3Hex(Buffer.from(await readlink(absolutePath, { encoding: "buffer" }))),
    };
  }
  if (!stats.isFile()) return null;
  // Git records only the owner's execute bit: 100755 when it is set, 100644 otherwise.
  return {
    mode: (stats.mode & 0o100) !== 0 ? "100755" : "100644",
    hash: blake3Hex(await readFile(absolutePath)),
  };
}
