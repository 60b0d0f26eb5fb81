import { CharterError } from "../foundation/charter-error.js";
import { blake3Hex } from "../foundation/content-hash.js";
import { gitCommandStreaming } from "./git-command.js";
import type { WorkRepository } from "./work-repository.js";

/**
 * BLAKE3 of the content of each git blob, read through one `git cat-file --batch` and hashed as each blob
 * arrives, so that only one blob is held at a time (not the repository's hundred megabytes at once).
 */
export async function hashBlobs(
  repository: WorkRepository,
  objects: readonly string[],
): Promise<Map<string, string>> {
  const unique = [...new Set(objects)];
  const hashes = new Map<string, string>();
  if (unique.length === 0) return hashes;
  // The blob being read: its id, the bytes still to come (plus the newline after them), what has come so far.
  let current: { object: string; remaining: number; pieces: Buffer[] } | null = null;
  let header = Buffer.alloc(0);
  const take = (chunk: Buffer): void => {
    let offset = 0;
    while (offset < chunk.length) {
      if (current === null) {
        const lineEnd = chunk.indexOf(10, offset);
        if (lineEnd === -1) {
          header = Buffer.concat([header, chunk.subarray(offset)]);
          return;
        }
        const line = Buffer.concat([header, chunk.subarray(offset, lineEnd)]).toString("utf8");
        header = Buffer.alloc(0);
        offset = lineEnd + 1;
        const [object, type, size] = line.split(" ");
        if (object === undefined || type !== "blob" || size === undefined) {
          throw new CharterError("WORK_GIT_FAILED", `git cat-file did not give a blob: ${line}`, {
            details: { command: "git cat-file --batch", cwd: repository.root, line },
          });
        }
        current = { object, remaining: Number(size) + 1, pieces: [] };
        continue;
      }
      const piece = chunk.subarray(offset, offset + current.remaining);
      current.pieces.push(piece);
      current.remaining -= piece.length;
      offset += piece.length;
      if (current.remaining === 0) {
        const content = Buffer.concat(current.pieces);
        // The last byte is the newline git writes after each blob's content.
        hashes.set(current.object, blake3Hex(content.subarray(0, content.length - 1)));
        current = null;
      }
    }
  };
  await gitCommandStreaming(
    ["cat-file", "--batch"],
    { cwd: repository.root, input: `${unique.join("\n")}\n` },
    take,
  );
  if (hashes.size !== unique.length) {
    throw new CharterError(
      "WORK_GIT_FAILED",
      `git cat-file gave ${hashes.size} of ${unique.length} blobs in ${repository.root}`,
      { details: { command: "git cat-file --batch", cwd: repository.root } },
    );
  }
  return hashes;
}
