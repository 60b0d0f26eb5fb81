import { gitCommand } from "./git-command.js";
import type { StateListing } from "./state-listing.js";
import type { WorkRepository } from "./work-repository.js";

/** What a work item changed between its before and after snapshots (repository-relative paths, sorted). */
export interface WorkChange {
  readonly modified: readonly string[];
  readonly created: readonly string[];
  readonly deleted: readonly string[];
  /** Lines added plus lines removed over text files, plus one per binary file. */
  readonly deltaSize: number;
  /** BLAKE3 of each created or modified file's content. */
  readonly artifactHashes: Readonly<Record<string, string>>;
}

/** The change between two snapshot commits, read with `git diff-tree` (no rename detection: a move is both). */
export async function workChange(
  repository: WorkRepository,
  before: string,
  after: string,
  afterListing: StateListing,
): Promise<WorkChange> {
  const cwd = repository.root;
  const [nameStatus, numberStatus] = await Promise.all([
    gitCommand(["diff-tree", "-r", "-z", "--no-renames", "--name-status", before, after], { cwd }),
    gitCommand(["diff-tree", "-r", "-z", "--no-renames", "--numstat", before, after], { cwd }),
  ]);
  const names = nameStatus.stdout.toString("utf8").split("\0");
  const modified: string[] = [];
  const created: string[] = [];
  const deleted: string[] = [];
  for (let index = 0; index + 1 < names.length; index += 2) {
    const status = names[index];
    const path = names[index + 1] as string;
    if (status === "A") created.push(path);
    else if (status === "D") deleted.push(path);
    else modified.push(path);
  }
  const numbers = numberStatus.stdout.toString("utf8").split("\0");
  let deltaSize = 0;
  for (const record of numbers) {
    const [added, removed] = record.split("\t");
    if (added === undefined || removed === undefined) continue;
    // Binary files show `-\t-`: one unit each.
    deltaSize += added === "-" ? 1 : Number(added) + Number(removed);
  }
  const artifactHashes: Record<string, string> = {};
  for (const path of [...created, ...modified].sort()) {
    const file = afterListing.get(path);
    if (file !== undefined) artifactHashes[path] = file.hash;
  }
  return {
    modified: modified.sort(),
    created: created.sort(),
    deleted: deleted.sort(),
    deltaSize,
    artifactHashes,
  };
}

export interface WorkLimits {
  readonly max_files: number;
  readonly max_tool_ops: number;
  readonly max_delta_size: number;
}

/** The admission rules in the seed's order and wording; null when the run is admitted. */
export function admissionDenial(
  change: WorkChange,
  toolOps: number,
  limits: WorkLimits,
  duplicateOf: string | null,
): string | null {
  const files = change.modified.length + change.created.length + change.deleted.length;
  if (files > limits.max_files) return `Exceeded max files: ${files} > ${limits.max_files}`;
  if (toolOps > limits.max_tool_ops) return `Exceeded max tool ops: ${toolOps} > ${limits.max_tool_ops}`;
  if (change.deltaSize > limits.max_delta_size) {
    return `Exceeded max delta size: ${change.deltaSize} > ${limits.max_delta_size}`;
  }
  if (duplicateOf !== null) {
    return `Duplicate run: receipt ${duplicateOf} already records this work item from the same before state to the same after state`;
  }
  return null;
}
