import { closeSync, openSync, readSync } from "node:fs";
import type { ChainBinding } from "./chain-link-hash.js";
import { checkRawPayloadFile, type RawPayloadCheck } from "./check-raw-payload-file.js";
import { checkTranscriptLineBlock, type LineBlockResult } from "./check-transcript-line-block.js";
import { checkRawPayloadText } from "./raw-request-parts.js";

/**
 * A unit of verification work that needs nothing from the others, so that it can run on any thread: a byte
 * range of `transcript.jsonl` (read where it runs, so that no bytes cross threads), stored lines already
 * encoded, a batch of raw payload files, or a batch of stored raw payloads.
 */
export type LineBlockTask =
  | {
      readonly kind: "file-range";
      readonly path: string;
      /** [start, end): whole lines, except that the file's last range may end in a line cut off. */
      readonly start: number;
      readonly end: number;
      readonly binding: ChainBinding;
    }
  | {
      readonly kind: "lines";
      readonly bytes: Uint8Array;
      readonly lineEnds: Int32Array;
      readonly binding: ChainBinding;
    }
  | { readonly kind: "raw-files"; readonly directory: string; readonly names: readonly string[] }
  | { readonly kind: "raw-texts"; readonly hashes: readonly string[]; readonly texts: readonly string[] };

export type LineBlockTaskResult =
  | { readonly kind: "lines"; readonly result: LineBlockResult }
  | { readonly kind: "raw-files"; readonly intact: readonly boolean[]; readonly composites: RawComposites }
  | { readonly kind: "raw-texts"; readonly intact: readonly boolean[]; readonly composites: RawComposites };

/** The raw-request composites of a batch: each one's position in the batch and the part hashes it names. */
export type RawComposites = readonly (readonly [number, readonly string[]])[];

function rawBatchResult<Kind extends "raw-files" | "raw-texts">(
  kind: Kind,
  checks: readonly RawPayloadCheck[],
) {
  const composites: [number, readonly string[]][] = [];
  checks.forEach((check, index) => {
    if (check.parts !== null) composites.push([index, check.parts]);
  });
  return { kind, intact: checks.map((check) => check.intact), composites };
}

export function runLineBlockTask(task: LineBlockTask): LineBlockTaskResult {
  switch (task.kind) {
    case "file-range":
      return {
        kind: "lines",
        result: checkTranscriptLineBlock(
          { bytes: readRange(task.path, task.start, task.end), lineEnds: null },
          task.binding,
        ),
      };
    case "lines":
      return {
        kind: "lines",
        result: checkTranscriptLineBlock({ bytes: task.bytes, lineEnds: task.lineEnds }, task.binding),
      };
    case "raw-files":
      return rawBatchResult(
        "raw-files",
        task.names.map((name) => checkRawPayloadFile(task.directory, name)),
      );
    case "raw-texts":
      return rawBatchResult(
        "raw-texts",
        task.hashes.map((hash, index) => checkRawPayloadText(hash, task.texts[index] as string)),
      );
  }
}

/** The bytes [start, end) of a file; fewer when the file is shorter now. */
function readRange(path: string, start: number, end: number): Uint8Array {
  const bytes = new Uint8Array(end - start);
  const descriptor = openSync(path, "r");
  try {
    let filled = 0;
    while (filled < bytes.length) {
      const read = readSync(descriptor, bytes, filled, bytes.length - filled, start + filled);
      if (read === 0) break;
      filled += read;
    }
    return filled === bytes.length ? bytes : bytes.subarray(0, filled);
  } finally {
    closeSync(descriptor);
  }
}
