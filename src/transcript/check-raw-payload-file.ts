import { closeSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { blake3Hex } from "../foundation/content-hash.js";
import { rawRequestPartHashes } from "./raw-request-parts.js";
import { isRawPayloadHash } from "./run-directory-layout.js";

/** A raw payload's check: whether it hashes to its name and, for a raw-request composite, the parts it names. */
export interface RawPayloadCheck {
  readonly intact: boolean;
  readonly parts: readonly string[] | null;
}

const damaged: RawPayloadCheck = { intact: false, parts: null };

/** The hash a file of `raw/` is named after: its name without `.json`. */
export function rawPayloadHashOfFileName(name: string): string {
  return name.endsWith(".json") ? name.slice(0, -".json".length) : name;
}

/**
 * Whether the file `name` of a run's `raw/` directory is an intact raw payload: named `<hash>.json` after a
 * well-formed hash, readable, and its bytes hashing to that hash; and the parts it names if it is a raw-request
 * composite.
 *
 * Synchronous on purpose: a run holds thousands of small payload files, and for small files the thread-pool
 * round trip of an asynchronous read costs several times the read itself (measured here: 20,000 files in
 * ~150 ms synchronously against ~1 s with 16 reads in flight). Verification is a batch job.
 */
export function checkRawPayloadFile(rawDirectory: string, name: string): RawPayloadCheck {
  const hash = rawPayloadHashOfFileName(name);
  if (!isRawPayloadHash(hash) || name !== `${hash}.json`) return damaged;
  let content: Uint8Array;
  try {
    content = readWholeFile(join(rawDirectory, name));
  } catch {
    return damaged;
  }
  if (blake3Hex(content) !== hash) return damaged;
  return { intact: true, parts: rawRequestPartHashes(content) };
}

// Reused for every file: payloads are small, and a read into a buffer at hand needs neither an allocation nor the
// fstat that readFileSync makes to size one.
let scratch = new Uint8Array(64 << 10);

/** The file's bytes, valid until the next call. */
function readWholeFile(path: string): Uint8Array {
  const descriptor = openSync(path, "r");
  try {
    let filled = 0;
    for (;;) {
      if (filled === scratch.length) {
        const larger = new Uint8Array(scratch.length * 2);
        larger.set(scratch);
        scratch = larger;
      }
      const read = readSync(descriptor, scratch, filled, scratch.length - filled, null);
      if (read === 0) return scratch.subarray(0, filled);
      filled += read;
    }
  } finally {
    closeSync(descriptor);
  }
}
