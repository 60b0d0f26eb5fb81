import { closeSync, openSync, readSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { CharterError } from "../foundation/charter-error.js";
import type { ChainBinding } from "./chain-link-hash.js";
import { rawPayloadHashOfFileName } from "./check-raw-payload-file.js";
import { extendVerifiedPrefix } from "./extend-verified-prefix.js";
import { createLineBlockPool } from "./line-block-pool.js";
import { type LineBlockTaskResult, runLineBlockTask } from "./line-block-task.js";
import { bindRawRequestParts } from "./raw-request-parts.js";
import type { RawPayloadIndex, VerifiedPrefix } from "./transcript-entry-verifier.js";

/** What `verifyRunFilesInBlocks` established. */
export interface RunFilesInBlocks {
  /** Every file of `raw/` by the hash it is named after: true when intact. */
  readonly rawIndex: RawPayloadIndex;
  /** The lines from the first known to pass verification in order. */
  readonly prefix: VerifiedPrefix;
  /** The byte offset where the line after the prefix starts. */
  readonly prefixEnd: number;
}

/** Bytes of transcript per task: enough to make a task's overhead small, few enough to share out evenly. */
const rangeBytes = 2 << 20;
/** Raw payload files per task. */
const rawFilesPerTask = 1000;
/** What a raw payload file is taken to weigh when deciding whether threads pay (an open, a read, a close). */
const rawFileWeightBytes = 4096;

/**
 * The part of a run directory's verification that parallelises: hashing the raw payload files, and checking the
 * transcript in ranges of whole lines (`checkTranscriptLineBlock`), on worker threads when the run is large
 * enough. Ranges are joined in order into the longest prefix of lines that pass; the caller verifies the lines
 * from the end of the prefix on with the entry verifier, which names the first fault exactly as if it had
 * checked every line itself (a range is accepted only when every line in it passes what the verifier checks).
 */
export async function verifyRunFilesInBlocks(
  transcriptPath: string,
  rawDirectory: string,
  binding: ChainBinding,
  genesisHash: string,
): Promise<RunFilesInBlocks> {
  const names = await listRawPayloadFiles(rawDirectory);
  const size = await fileSize(transcriptPath);
  const pool = createLineBlockPool(size + names.length * rawFileWeightBytes);
  try {
    const rawTasks: Promise<LineBlockTaskResult | null>[] = [];
    for (let first = 0; first < names.length; first += rawFilesPerTask) {
      const batch = names.slice(first, first + rawFilesPerTask);
      rawTasks.push(pool.run({ kind: "raw-files", directory: rawDirectory, names: batch }));
    }
    const ranges = lineAlignedRanges(transcriptPath, size);
    const rangeTasks = ranges.map(([start, end]) =>
      pool.run({ kind: "file-range", path: transcriptPath, start, end, binding }),
    );

    const rawIndex = new Map<string, boolean>();
    const composites = new Map<string, readonly string[]>();
    for (let task = 0; task < rawTasks.length; task++) {
      const batch = names.slice(task * rawFilesPerTask, (task + 1) * rawFilesPerTask);
      const result =
        (await rawTasks[task]) ??
        runLineBlockTask({ kind: "raw-files", directory: rawDirectory, names: batch });
      if (result.kind !== "raw-files") {
        throw new CharterError("INTERNAL_ERROR", "a raw-files verification task gave another kind of result");
      }
      batch.forEach((name, index) => {
        rawIndex.set(rawPayloadHashOfFileName(name), result.intact[index] === true);
      });
      for (const [index, parts] of result.composites) {
        composites.set(rawPayloadHashOfFileName(batch[index] as string), parts);
      }
    }
    bindRawRequestParts(rawIndex, composites);

    let prefix: VerifiedPrefix = { lines: 0, headHash: genesisHash };
    let prefixEnd = 0;
    for (let index = 0; index < ranges.length; index++) {
      const [start, end] = ranges[index] as [number, number];
      const result = await rangeTasks[index];
      const extended =
        result?.kind === "lines" ? extendVerifiedPrefix(prefix, result.result, rawIndex) : null;
      if (extended === null || result?.kind !== "lines") break;
      prefix = extended;
      prefixEnd = start + result.result.consumed;
      // Only the file's last range may end in a line without its newline (which the caller reports).
      if (prefixEnd !== end) break;
    }
    return { rawIndex, prefix, prefixEnd };
  } finally {
    pool.close();
  }
}

async function listRawPayloadFiles(rawDirectory: string): Promise<string[]> {
  try {
    return await readdir(rawDirectory);
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === "ENOENT") return [];
    throw error;
  }
}

/** The file's size; 0 when it is missing (the caller's line reader reports that). */
async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

/**
 * [start, end) ranges of about `rangeBytes` covering the file, each starting at the start of a line: a range
 * ends after the first newline at or past its nominal end (found with small reads), so a line longer than a
 * range simply makes that range longer.
 */
function lineAlignedRanges(path: string, size: number): [number, number][] {
  if (size === 0) return [];
  const ranges: [number, number][] = [];
  const descriptor = openSync(path, "r");
  try {
    const window = Buffer.allocUnsafe(64 << 10);
    let start = 0;
    while (start < size) {
      let end = size;
      let searchFrom = start + rangeBytes - 1;
      while (searchFrom < size) {
        const read = readSync(descriptor, window, 0, window.length, searchFrom);
        if (read === 0) break;
        const newlineAt = window.subarray(0, read).indexOf(0x0a);
        if (newlineAt !== -1) {
          end = searchFrom + newlineAt + 1;
          break;
        }
        searchFrom += read;
      }
      ranges.push([start, end]);
      start = end;
    }
  } finally {
    closeSync(descriptor);
  }
  return ranges;
}
