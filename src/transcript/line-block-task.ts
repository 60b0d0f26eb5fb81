import { closeSync, openSync, readSync } from "node:fs";
import { blake3Hex } from "../foundation/content-hash.js";
import type { ChainBinding } from "./chain-link-hash.js";
import { checkRawPayloadFile } from "./check-raw-payload-file.js";
import { checkTranscriptLineBlock, type LineBlockResult } from "./check-transcript-line-block.js";
import { isRawPayloadHash } from "./run-directory-layout.js";

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
  | { readonly kind: "raw-files"; readonly intact: readonly boolean[] }
  | { readonly kind: "raw-texts"; readonly intact: readonly boolean[] };

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
      return {
        kind: "raw-files",
        intact: task.names.map((name) => checkRawPayloadFile(task.directory, name)),
      };
    case "raw-texts":
      return {
        kind: "raw-texts",
        intact: task.hashes.map(
          (hash, index) => isRawPayloadHash(hash) && blake3Hex(task.texts[index] as string) === hash,
        ),
      };
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
