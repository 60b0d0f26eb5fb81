import { realpath } from "node:fs/promises";
import { resolve } from "node:path";
import { CharterError } from "../foundation/charter-error.js";
import { gitText } from "./git-command.js";

/** A git working tree that work items run in. */
export interface WorkRepository {
  /** The working tree's top folder (symbolic links resolved). */
  readonly root: string;
  /** This working tree's own git folder (`.git`, or `.git/worktrees/<name>` for a linked worktree). */
  readonly gitDirectory: string;
  /** The folder shared by every worktree of the repository: refs, objects, the receipt chain. */
  readonly commonDirectory: string;
}

/** The git working tree around `directory`; WORK_REPOSITORY_INVALID when there is none. */
export async function openWorkRepository(directory: string): Promise<WorkRepository> {
  let lines: string[];
  try {
    lines = (
      await gitText(
        ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir"],
        { cwd: resolve(directory) },
      )
    ).split("\n");
  } catch (error) {
    throw new CharterError(
      "WORK_REPOSITORY_INVALID",
      `${resolve(directory)} is not inside a git working tree: run 'git init' there or pass --repo DIR`,
      { details: { repository: resolve(directory) }, cause: error },
    );
  }
  const [root, gitDirectory, commonDirectory] = lines;
  if (root === undefined || root === "" || gitDirectory === undefined || commonDirectory === undefined) {
    throw new CharterError(
      "WORK_REPOSITORY_INVALID",
      `${resolve(directory)} has no working tree (a bare repository?): work items need one`,
      { details: { repository: resolve(directory) } },
    );
  }
  return { root: await realpath(root), gitDirectory, commonDirectory };
}
