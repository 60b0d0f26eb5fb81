import { lstat, readlink, realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** A path a model gave, confined to the repository: where it is, or why it was refused. */
export type ConfinedPath =
  | { readonly ok: true; readonly absolute: string; readonly relative: string }
  | { readonly ok: false; readonly reason: string };

function inside(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest === "" || (!rest.startsWith("..") && !isAbsolute(rest));
}

// Receipts and recovery records are Charter's, not the agent's: `.charter/work` is refused like `.git`.
function refusedFolder(segments: readonly string[]): string | null {
  if (segments.some((segment) => segment.toLowerCase() === ".git")) return ".git";
  if (segments[0]?.toLowerCase() === ".charter" && segments[1]?.toLowerCase() === "work")
    return ".charter/work";
  return null;
}

/**
 * Confines a path from a model to the repository at `root` (a real path, symbolic links resolved): absolute paths,
 * paths that leave it (`../`), anything in `.git` or `.charter/work`, and paths through a symbolic link that leads
 * outside (or into `.git`) are refused. Every existing component is checked on disk, so a link planted by an
 * earlier call cannot be used to escape.
 */
export async function confineWorkspacePath(root: string, requested: string): Promise<ConfinedPath> {
  if (requested.includes("\0")) return { ok: false, reason: "the path contains a NUL character" };
  if (isAbsolute(requested) || /^[A-Za-z]:[\\/]/.test(requested)) {
    return { ok: false, reason: `'${requested}' is absolute: give a path relative to the repository` };
  }
  const absolute = resolve(root, requested);
  if (!inside(root, absolute)) return { ok: false, reason: `'${requested}' leaves the repository` };
  const relativePath = relative(root, absolute).split(sep).join("/");
  const segments = relativePath === "" ? [] : relativePath.split("/");
  const folder = refusedFolder(segments);
  if (folder !== null)
    return { ok: false, reason: `'${requested}' is inside ${folder}, which workspace tools never touch` };
  const gitFolder = join(root, ".git");
  let current = root;
  for (const segment of segments) {
    current = join(current, segment);
    const stats = await lstat(current).catch(() => null);
    if (stats === null) break;
    if (!stats.isSymbolicLink()) continue;
    let target: string;
    try {
      target = await realpath(current);
    } catch {
      // A dangling link: judged by where it points.
      target = resolve(dirname(current), await readlink(current));
    }
    if (!inside(root, target) || inside(gitFolder, target)) {
      return {
        ok: false,
        reason: `'${requested}' goes through a symbolic link that leads outside the repository`,
      };
    }
    const targetFolder = refusedFolder(relative(root, target).split(sep));
    if (targetFolder !== null) {
      return { ok: false, reason: `'${requested}' goes through a symbolic link into ${targetFolder}` };
    }
  }
  return { ok: true, absolute, relative: relativePath === "" ? "." : relativePath };
}
