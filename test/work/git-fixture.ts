import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** Runs real git in `cwd` and returns its output (for set-up and for checking what a user would see). */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Test",
      GIT_AUTHOR_EMAIL: "test@example.com",
      GIT_COMMITTER_NAME: "Test",
      GIT_COMMITTER_EMAIL: "test@example.com",
    },
  }).trim();
}

/** A new git repository in a temporary folder with `files` committed on branch `main`. */
export async function gitRepository(files: Readonly<Record<string, string>>, prefix = "charter-work-") {
  const root = await mkdtemp(join(tmpdir(), prefix));
  git(root, "init", "-q", "-b", "main");
  for (const [path, content] of Object.entries(files)) await writeRepositoryFile(root, path, content);
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "initial");
  return root;
}

export async function writeRepositoryFile(root: string, path: string, content: string): Promise<void> {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), content);
}
